import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// The station's pipeline thread: pulls its inputs, lets the selector decide which one plays, runs the stage chain,
/// publishes pages, and carries out the stream clock's and the reconnect schedules' decisions. Confined to its
/// thread.
///
/// Every connected input is read and decoded (an MP3 input to the common format, an Ogg Opus root to its packets);
/// what the one that plays yields goes to the chain, the others' newest audio is kept for a switch and measured for
/// dead air (`Pipeline+Inputs.swift`). A switch (`Pipeline+Switching.swift`) is a change of what feeds the chain:
/// the encoders, rings, Ogg streams and HLS timelines go on as they were.
final class Pipeline {
    var configuration: StationConfiguration
    let station: Station
    /// The station's settings version `configuration` was taken at.
    var settingsVersion = 0
    /// The station's outputs: each one's Broadcaster, and its HLS stream if it has one (a reload may add or remove
    /// a rendition: `reshapeOutputs`).
    var outputs: [StationOutput]
    let shared: LockedBox<StationState>
    var local = StationState()
    /// New titles at most once a second, the newest winning.
    var titles = TitleThrottle()
    /// The station's chain: a transcoding station's (its inputs decoded) or an edge's (Ogg Opus roots relayed). The
    /// pipeline drives it, and its inputs' readings feed it, without knowing which.
    let chain: any PipelineChain
    var clock: StreamClock
    /// The inputs in priority order, and which one plays.
    var inputs: [StationInput]
    var selector: InputSelector
    /// The input a crossfade is fading out while it still delivers (its audio goes on into the fade until it is
    /// over); nil when none.
    var fadingOut: Int?
    /// When the input fading out last delivered audio: one that stops for `outgoingPatience` ends its fade.
    var outgoingAudioAt = 0.0
    static let outgoingPatience = 0.25
    /// The live show being recorded (`record_live`: `Pipeline+Recording.swift`), and the main output's newest granule.
    var show: LiveShowSpan?
    var mainGranule: Int64 = 0
    /// Counts of what inputs no longer listed had taken (their share of the station's counters).
    var retired = ReadingCounters()
    /// Lines an upstream can cause at will (a format change per frame, a stage error per piece): one a second per
    /// kind, then a count.
    var logLimit = LogRateLimit<PipelineLogTopic>(limit: 1, window: 1)

    /// - Parameter chain: the station's chain, its outputs' header pages already in the rings (`makeChain`).
    init(station: Station, chain: any PipelineChain, state: LockedBox<StationState>) {
        self.configuration = station.configuration
        self.station = station
        outputs = station.outputs
        self.shared = state
        self.chain = chain
        var clockSettings = StreamClock.Settings()
        clockSettings.jitter = configuration.silenceAfter
        clockSettings.maxLead = configuration.maxLead
        clock = StreamClock(settings: clockSettings, now: monotonicNow())
        let station = station.configuration
        inputs = station.inputs.map { StationInput($0, station: station, chain: chain) }
        selector = InputSelector(inputs: station.inputs.count, settings: Self.selectorSettings(station))
    }

    static func selectorSettings(_ configuration: StationConfiguration) -> InputSelector.Settings {
        var settings = InputSelector.Settings()
        settings.recover = configuration.failover.recover
        settings.deadAir = configuration.failover.deadAir
        settings.hotStandby = configuration.failover.hotStandby
        settings.live = configuration.takesLiveSources
        return settings
    }

    /// The input that plays.
    var playing: StationInput { inputs[selector.playing] }
    /// Audio not yet handed to the outputs.
    var queued: Double { chain.queuedSeconds }
    /// Drops and pauses seen by the last log line about them (logged at most every `reportInterval`).
    var reported = (dropped: 0.0, paused: 0.0, at: -Double.infinity)
    static let reportInterval = 60.0

    /// Runs until `thread` is asked to stop; every iteration beats its heartbeat, whatever the inputs do.
    func run(in thread: ServiceThread) {
        clock = StreamClock(settings: clock.settings, now: monotonicNow())
        var lastPublishedState = monotonicNow()
        let hang = TestHooks.hangPipeline.flatMap { $0.station == configuration.name ? monotonicNow() + $0.after : nil }
        while !thread.isStopping {
            if let hang, monotonicNow() >= hang {
                Log.warning("\(configuration.name): test hook: the pipeline hangs now (RADIO_RELAY_TEST_HANG_PIPELINE)")
                while !thread.isStopping { usleep(100_000) }
                break
            }
            thread.beat()
            reconfigure()
            takeCommands(now: monotonicNow())
            takeLive(now: monotonicNow())
            manageConnections(now: monotonicNow())
            pullInputs(now: monotonicNow())
            drainBacklogs()
            let now = monotonicNow()
            for index in inputs.indices { checkAudio(index, now: now) }
            checkLate(now: now)
            checkFiles(now: now)
            decide(now: now)
            let paced = playing.paced
            advanceClock(paced: paced)
            if paced, playing.backlog.isFull || playing.downloader == nil,
                let nap = clock.nap(now: monotonicNow(), queued: chain.heldSeconds)
            {
                usleep(UInt32(nap * 1_000_000))
            }
            publish()
            logSummaries(now: monotonicNow())
            if monotonicNow() - lastPublishedState > 0.1 {
                publishState()
                lastPublishedState = monotonicNow()
            }
        }
        publishState()
    }

    // MARK: Stages

    func takeEvents() {
        for event in chain.takeEvents() {
            switch event {
            case .format(let format):
                let now = local.format == nil ? "" : " now"
                logLimited(.format, .info, "\(configuration.name): upstream format\(now) \(format)")
                local.format = format
            case .metadata(let fields):
                guard let title = Sanitized.title(in: fields) else { continue }
                offer(title)
            }
        }
    }

    /// A title from the input that plays (or its own when a switch made it play): shown through the throttle.
    func offer(_ title: String) {
        guard title != local.title || titles.held != nil else { return }
        if let shown = titles.offer(title, now: monotonicNow()) { show(shown) }
    }

    /// A title the throttle let through: the station's state, and the access log's line.
    func show(_ shown: (title: String, skipped: Int)) {
        guard shown.title != local.title else { return }
        local.title = shown.title
        for output in outputs {
            output.hls?.title(shown.title)
            if output.format == .mp3 { output.broadcaster.setStreamTitle(shown.title) }
        }
        let input = playing.name
        // While a DJ's set plays, the DJ's name goes with each title.
        let dj = playing.downloader != nil ? playing.live?.dj : nil
        let now = wallClockNow()
        station.history.withLock { $0.record(shown.title, at: now, input: input, dj: dj) }
        for writer in station.archives {
            writer.offer(
                title: ArchiveTitles.Entry(time: ArchiveSession.millis(now), title: shown.title, input: input, dj: dj))
        }
        let skipped = shown.skipped > 0 ? " (\(shown.skipped) titles in between not shown)" : ""
        // An input whose title is not known yet clears the last one's.
        let what = shown.title.isEmpty ? "(no title)" : shown.title
        Log.info("\(configuration.name): now playing: \(what)\(skipped)")
        publishState()
    }

    /// Carries out one step of the stream clock: drops what runs too far ahead, encodes what is due (with the
    /// clock's rate correction), fills silence while the input is away or late.
    func advanceClock(paced: Bool) {
        let now = monotonicNow()
        if let shown = titles.due(now: now) { show(shown) }
        let waiting = queued
        let step = clock.step(now: now, queued: waiting, finite: paced)
        if step.drop > 0 {
            do {
                try chain.drop(seconds: step.drop)
            } catch {
                Log.error("\(configuration.name): dropping audio: \(error)")
            }
            Log.debug(
                "\(configuration.name): clock: dropped \(step.drop) s of \(waiting) s queued, released \(step.release) s, "
                    + "ahead \(clock.ahead(now: now)) s")
        }
        if step.silence > 0 {
            Log.debug("\(configuration.name): clock: \(step.silence) s of silence, ahead \(clock.ahead(now: now)) s")
        }
        do {
            try chain.release(seconds: step.release, nudge: step.nudge)
            let frames = PCMBuffer.frames(step.silence, rate: configuration.commonRate)
            if frames > 0 { try chain.encodeSilence(frames: frames) }
        } catch {
            Log.error("\(configuration.name): encoding failed: \(error)")
        }
        local.silenceSeconds = clock.silenceSeconds
        local.droppedSeconds = clock.droppedSeconds
        local.pausedSeconds = clock.pausedSeconds
        report(now: now)
    }

    func publishState() {
        reportInputs(into: &local)
        chain.report(into: &local)
        let snapshot = local
        shared.withLock { $0 = snapshot }
    }
}

@available(*, unavailable) extension Pipeline: Sendable {}
