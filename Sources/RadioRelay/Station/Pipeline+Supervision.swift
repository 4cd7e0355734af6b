import Foundation
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// The pipeline's supervision: settings taken after a reload, the upstream that sends no audio, and the log lines
/// about what the stream clock dropped or skipped.
extension Pipeline {
    /// Takes the station's new settings after a reload: the clock's lead and jitter and whether titles start links
    /// at once, a new upstream by dropping the current connection and connecting to it now.
    func reconfigure() {
        let version = station.settingsVersion.load(ordering: .acquiring)
        guard version != settingsVersion else { return }
        settingsVersion = version
        let old = configuration
        configuration = station.configuration
        var clockSettings = clock.settings
        clockSettings.jitter = configuration.silenceAfter
        clockSettings.maxLead = configuration.maxLead
        clock.update(settings: clockSettings)
        reconnect.update(delays: configuration.reconnectDelay)
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
        if configuration.upstream != old.upstream {
            Log.notice("\(configuration.name): upstream is now \(Redaction.text(configuration.upstream))")
            downloader = nil
            backlog.clear()
            passEnded = false
            reconnect.again()
        }
    }

    /// An upstream that keeps sending bytes none of which is audio (an HTML page, AAC, a metadata trickle) is down.
    func checkAudio(now: Double) {
        guard downloader != nil, announced, !connection.file else { return }
        let packets = chain.packetsSeen
        if packets != connection.lastPackets {
            connection.lastPackets = packets
            connection.lastAudioAt = now
            return
        }
        let silentFor = now - connection.lastAudioAt
        guard silentFor >= configuration.noAudioTimeout else { return }
        let received = local.bytesIn - connection.bytesAtOpen
        let type = downloader?.responseHeaders["content-type"].map { ", Content-Type \(Sanitized.text($0))" } ?? ""
        let audio = configuration.relaysOggOpus ? "Opus" : "MPEG"
        fail(
            DownloadError(
                .transfer, url: configuration.upstream,
                "no \(audio) audio in \(Int(configuration.noAudioTimeout)) s (\(received) bytes on this connection\(type))"
            ),
            now: now)
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

extension Pipeline {
    /// An HTTP upstream whose Content-Type says the other kind of stream than the station expects fails at once,
    /// with what to change: an edge relays Ogg Opus as it is, a transcoding station decodes MP3.
    func checkFormat(_ contentType: String?) throws {
        guard let contentType = contentType?.lowercased() else { return }
        let ogg = contentType.contains("ogg") || contentType.contains("opus")
        if configuration.relaysOggOpus && !ogg {
            throw DownloadError(
                .transfer, url: configuration.upstream,
                "answered Content-Type \(Sanitized.text(contentType)), not audio/ogg: an upstream URL ending in "
                    + ".opus, .ogg or .oga, or tcp://, is relayed as Ogg Opus")
        }
        if !configuration.relaysOggOpus && ogg {
            throw DownloadError(
                .transfer, url: configuration.upstream,
                "answered Content-Type \(Sanitized.text(contentType)): an Ogg stream is relayed as it is when the "
                    + "upstream URL ends in .opus, .ogg or .oga (or is tcp://)")
        }
    }
}

/// Kinds of pipeline log lines an upstream can repeat at will.
enum PipelineLogTopic: String, Hashable, Sendable {
    case format = "upstream format changes"
    case stageError = "stage errors"
}
