import Foundation
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// The pipeline's supervision: settings taken after a reload (the list of inputs among them), and the log lines
/// about what the stream clock dropped or skipped.
extension Pipeline {
    /// Takes the station's new settings after a reload: the clock's lead and jitter, whether titles start links at
    /// once, the encoders' tuning, the switching rules and the list of inputs.
    func reconfigure() {
        let version = station.settingsVersion.load(ordering: .acquiring)
        guard version != settingsVersion else { return }
        settingsVersion = version
        let old = configuration
        configuration = station.configuration
        let current = station.outputs
        if current.map(\.label) != outputs.map(\.label) { reshapeOutputs(current) }
        var clockSettings = clock.settings
        clockSettings.jitter = configuration.silenceAfter
        clockSettings.maxLead = configuration.maxLead
        clock.update(settings: clockSettings)
        chain.chainsTitles = configuration.chainTitles
        let encoders = configuration.outputSettings.map(\.encoder)
        if encoders != old.outputSettings.map(\.encoder) {
            do {
                try chain.retune(encoders)
                Log.notice(
                    "\(configuration.name): encoders now at \(encoders.map { "\($0.bitrate / 1000)k" }.joined(separator: ", "))"
                )
            } catch {
                Log.error("\(configuration.name): cannot retune the encoders: \(error)")
            }
        }
        if configuration.limiterCeiling != old.limiterCeiling {
            (chain as? StageChain)?.setLimiter(
                ceiling: configuration.limiterCeiling, lowLatency: configuration.encoder.lowDelay)
        }
        selector.settings = Self.selectorSettings(configuration)
        if configuration.inputs != old.inputs || configuration.failover.deadAirLevel != old.failover.deadAirLevel
            || configuration.loudness != old.loudness || configuration.truePeak != old.truePeak
        {
            reconfigureInputs(was: old)
        }
        for input in inputs { input.reconnect.update(delays: configuration.reconnectDelay) }
    }

    /// The station's outputs changed (a reload added or removed a rendition): the Encoders of the outputs kept go on
    /// as they were, a new rendition's Encoder (made by the station, its header pages in its ring) joins, a removed
    /// one's is dropped.
    func reshapeOutputs(_ current: [StationOutput]) {
        let previous = outputs.filter { $0.format == .oggOpus }.map(\.label)
        do {
            try chain.reshape(current, previous: previous, arriving: station.takeArrivingEncoders())
        } catch {
            Log.error("\(configuration.name): \(error)")
            return
        }
        outputs = current
    }

    /// A new list of inputs (a reload): an input whose URL is still listed keeps its connection, its reading and
    /// what the selector knows of it (under its new name and settings; new timeouts apply from its next
    /// connection); the one that plays goes on playing if it is still there; the others are dropped, new ones
    /// connected as the selector wants them.
    func reconfigureInputs(was old: StationConfiguration) {
        let wanted = configuration.inputs
        var remaining = Array(inputs.enumerated())
        var made: [StationInput] = []
        var previous: [Int?] = []
        for configured in wanted {
            if let found = remaining.firstIndex(where: { $0.element.configuration.upstream == configured.upstream }) {
                let (index, input) = remaining.remove(at: found)
                input.configuration = configured
                input.reading.reconfigure(configuration)
                made.append(input)
                previous.append(index)
            } else {
                made.append(StationInput(configured, station: configuration, chain: chain))
                previous.append(nil)
            }
        }
        let playingName = playing.name
        for (_, input) in remaining {
            retire(input)
            input.downloader = nil
        }
        let playingKept = previous.contains(selector.playing)
        if let fading = fadingOut {
            // A crossfade under way moves with its outgoing input, or ends with it.
            fadingOut = previous.firstIndex(of: fading)
            if fadingOut == nil { chain.endOutgoing() }
        }
        selector = selector.remapped(previous: previous, settings: Self.selectorSettings(configuration))
        inputs = made
        let names = inputs.map { "\($0.name) (\($0.configuration.shown))" }.joined(separator: ", ")
        Log.notice(
            "\(configuration.name): inputs now \(names)"
                + (playingKept
                    ? "; input \(playing.name) plays on"
                    : "; input \(playingName) is gone: input \(playing.name) plays once it is up"))
        if !playingKept {
            // The input that played is gone: as a failure of it, the rules choose again (its audio fades out).
            chain.fadeOut(frames: Self.fadeFrames(Self.shortFade, rate: configuration.commonRate))
        }
    }

    /// Writes a line of a kind an upstream can repeat at will, within `logLimit`: one a second per kind; the next
    /// line after a second says how many were left out (or `logSummaries` does, when none comes).
    func logLimited(_ topic: PipelineLogTopic, _ priority: Log.Priority, _ message: @autoclosure () -> String) {
        guard Log.isEnabled(priority) else { return }
        switch logLimit.admit(topic, now: monotonicNow()) {
        case .suppress: return
        case .write: Log.write(priority, message())
        case .writeAfter(let suppressed):
            Log.write(priority, summary(topic, suppressed))
            Log.write(priority, message())
        }
    }

    /// The counts of lines left out whose second is over.
    func logSummaries(now: Double) {
        while let (topic, suppressed) = logLimit.summary(now: now) { Log.notice(summary(topic, suppressed)) }
    }

    private func summary(_ topic: PipelineLogTopic, _ suppressed: Int) -> String {
        "\(configuration.name): … \(suppressed) more \(topic.rawValue) in \(wholeSeconds(logLimit.window)) s (not logged)"
    }

    /// Drops and pauses are logged when they first happen, then at most once a minute with what came since.
    func report(now: Double) {
        let dropped = clock.droppedSeconds - reported.dropped
        let paused = clock.pausedSeconds - reported.paused
        guard dropped >= 0.05 || paused > 0, now - reported.at >= Self.reportInterval else { return }
        if dropped >= 0.05 {
            Log.notice(
                "\(configuration.name): dropped \(String(format: "%.1f", dropped)) s of upstream audio beyond the "
                    + "\(clock.settings.maxLead) s lead (the upstream sent faster than real time)")
        }
        if paused > 0 {
            Log.warning(
                "\(configuration.name): the pipeline did not run for \(String(format: "%.1f", paused)) s "
                    + "(process paused); the stream clock moved on without filling that time")
        }
        reported = (clock.droppedSeconds, clock.pausedSeconds, now)
    }
}

/// Kinds of pipeline log lines an upstream can repeat at will.
enum PipelineLogTopic: String, Hashable, Sendable {
    case format = "upstream format changes"
    case stageError = "stage errors"
}
