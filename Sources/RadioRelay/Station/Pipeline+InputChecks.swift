import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The checks on what each input sends: audio of any codec within the no-audio timeout, the input that plays not
/// late, a waiting file input's file readable, the Content-Type of what an HTTP input answered.
extension Pipeline {

    /// An input that keeps sending bytes none of which is audio (an HTML page, AAC, a metadata trickle) is down.
    /// Audio is what any codec yields (decoded buffers of MP3 or Opus, a root's Opus packets); an input that sent
    /// nothing at all since its last audio has stalled (the `Downloader`'s stall rule ends it sooner when
    /// `stall_timeout` is shorter).
    func checkAudio(_ index: Int, now: Double) {
        let input = inputs[index]
        guard let downloader = input.downloader, input.announced, input.file == nil else { return }
        if input.packets != input.connection.lastPackets {
            input.connection.audioArrived(packets: input.packets, bytes: input.bytesIn, now: now)
            return
        }
        let timeout = configuration.noAudioTimeout
        guard now - input.connection.lastAudioAt >= timeout else { return }
        let received = input.bytesIn - input.connection.bytesAtOpen
        let reason: String
        if input.bytesIn == input.connection.bytesAtAudio {
            reason = "stalled: no data for \(Int(timeout)) s (\(received) bytes on this connection)"
        } else {
            let type = downloader.responseHeaders["content-type"].map { ", Content-Type \(Sanitized.text($0))" } ?? ""
            reason =
                "no \(input.reading.expectedAudio) in \(Int(timeout)) s (\(received) bytes on this connection\(type))"
        }
        fail(index, DownloadError(.transfer, url: input.configuration.upstream, reason), now: now)
    }

    /// An input that plays is late when it has sent no audio for `lateAfter` seconds — or one and a half times the
    /// longest recent wait between its arrivals on this connection, when that is longer (an Ogg source's pages of a
    /// second; `StationInput.Connection.longestGap(now:)`, known once two waits are) — while the station's lead (the
    /// audio encoded ahead of the wall clock and the audio held to play) is below `lateLead`, and none of its bytes
    /// wait unread: a hung peer or a blackholed path, which the stall rule ends only after `stall_timeout`. The
    /// selector then lets a flowing standby take over before the lead runs out (silence fills in once the stream is
    /// `jitter` behind, 0.55 s after the lead is below `lateLead`: no silence heard); the input stays connected, and
    /// plays again once it has flowed for `recover`. A wait the lead covers is ridden out: a lossy link's TCP
    /// retransmission (0.2 s, 0.6 s after a retransmission lost too) is no switch while a second of lead is in hand.
    static let lateAfter = 0.5
    static let lateLead = 0.25

    static func isLate(sinceAudio: Double, longestGap: Double, lead: Double) -> Bool {
        sinceAudio >= max(lateAfter, 1.5 * longestGap) && lead < lateLead
    }

    func checkLate(now: Double) {
        let index = selector.playing
        let input = inputs[index]
        let lead = clock.ahead(now: now) + chain.heldSeconds
        // A paced input whose read-ahead still holds bytes is not late: it is held back (a crossfade into it holds
        // its audio until the old input's has come), and all of it is audio held for the listeners.
        guard input.downloader != nil, input.flowing, input.announced, input.file == nil,
            input.backlog.isEmpty, selector.inputs[index].failure == nil, input.connection.knowsCadence,
            Self.isLate(
                sinceAudio: now - input.connection.lastAudioAt, longestGap: input.connection.longestGap(now: now),
                lead: lead)
        else { return }
        // Its next audio is a return: the selector hears of it, and it fades in.
        input.flowing = false
        selector.late(index, now: now)
        Log.info(
            "\(configuration.name): \(describe(input)) sent no audio for "
                + "\(String(format: "%.1f", now - input.connection.lastAudioAt)) s: late (lead "
                + "\(String(format: "%.2f", lead)) s)")
    }

    /// How often a file input that waits unconnected has its file checked, in seconds.
    static let fileCheckInterval = 5.0

    /// A file input that waits unconnected (a cold fallback) has its file checked every `fileCheckInterval`: one
    /// that cannot be read shows as failed, with why, in status, metrics and `radio-relay status`, long before the
    /// station needs it; logged once when it is found and once when it is back.
    func checkFiles(now: Double) {
        for input in inputs where input.downloader == nil {
            guard let file = input.file, now - file.checkedAt >= Self.fileCheckInterval else { continue }
            file.checkedAt = now
            let problem = file.problem
            guard problem != file.unreadable else { continue }
            file.unreadable = problem
            if let problem {
                input.lastError = problem
                Log.warning("\(configuration.name): \(describe(input)) \(problem): it cannot play when it is needed")
            } else {
                Log.notice("\(configuration.name): \(describe(input)) can be read again")
            }
        }
    }

    /// An HTTP input whose Content-Type says the other kind of stream than the station expects fails at once, with
    /// what to change: an edge relays Ogg Opus as it is, a transcoding station decodes MP3.
    func checkFormat(_ input: StationInput, _ contentType: String?) throws {
        guard let contentType = contentType?.lowercased() else { return }
        let ogg = contentType.contains("ogg") || contentType.contains("opus")
        if input.configuration.isOggOpus && !ogg {
            throw DownloadError(
                .transfer, url: input.configuration.upstream,
                "answered Content-Type \(Sanitized.text(contentType)), not audio/ogg: an upstream URL ending in "
                    + ".opus, .ogg or .oga, or tcp://, is relayed as Ogg Opus")
        }
        if !input.configuration.isOggOpus && ogg {
            throw DownloadError(
                .transfer, url: input.configuration.upstream,
                "answered Content-Type \(Sanitized.text(contentType)): an Ogg stream is relayed as it is when the "
                    + "upstream URL ends in .opus, .ogg or .oga (or is tcp://)")
        }
    }
}
