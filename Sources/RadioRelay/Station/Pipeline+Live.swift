import Foundation
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The live source's input (`source_password`, DJ accounts): a source client that the HTTP front end accepted and handed to the
/// station's `SourceDesk`. It is read as any input is — decoded (MP3 through the Reader, Ogg Opus through the Opus
/// stage), measured, paced at real time (a source that sends faster waits in its socket) — and the selector puts
/// it over every other input as soon as its audio flows. When it ends (it disconnects, stalls for
/// `source_timeout`, sends nothing decodable, or an operator kills it) the desk is given back and the station
/// hands back to its other inputs; the input right below stayed connected meanwhile.
extension Pipeline {
    /// The live source's input, when the station takes one (always the first).
    var liveIndex: Int? { inputs.first?.live != nil ? 0 : nil }

    /// Carries out what the station's desk holds: a source handed over, a title sent by the source (a kill is a
    /// command: `carryOut`).
    func takeLive(now: Double) {
        let desk = station.desk
        guard let index = liveIndex else {
            // The password was removed by a reload: a source handed over meanwhile is not taken, and one that was on
            // the air went with its input; the desk is free for when a password comes back.
            desk.takeArrival()?.close()
            if desk.isOccupied { desk.release() }
            return
        }
        let input = inputs[index]
        if let reason = input.live?.ending {
            // A source that closed: its read-ahead plays out first (its last words), then the station hands back.
            guard input.backlog.isEmpty || index != selector.playing else { return }
            input.live?.ending = nil
            endLive(index, reason: reason, now: now)
        }
        if let source = desk.takeArrival() { attach(source, to: index, now: now) }
        guard input.downloader != nil else {
            if selector.inputs[index].failure == nil {
                // No source yet (a station starting, a reload that added one): the rules choose among the others.
                if case .waiting = input.activity {} else { input.set(.waiting(nil)) }
                selector.failed(index, reason: "no live source connected", now: now)
            }
            return
        }
        if let title = desk.takeTitle() {
            input.ownTitle = title
            if index == selector.playing {
                do {
                    try input.reading.announce(title: title, plays: true)
                } catch {
                    logLimited(.stageError, .error, "\(configuration.name): live source title: \(error)")
                }
                takeEvents()
            }
        }
    }

    /// A source handed over: read from now on.
    private func attach(_ source: LiveSource, to index: Int, now: Double) {
        let input = inputs[index]
        do throws(SystemError) {
            try source.apply(PeerTimeout(seconds: configuration.peerTimeout))
        } catch {
            logLimited(.stageError, .warning, "\(configuration.name): \(source.label): \(error)")
        }
        input.downloader = Downloader(source: source)
        input.forgetConnection()
        input.connection = .init(openedAt: now, lastAudioAt: now, packets: input.packets, bytes: input.bytesIn)
        input.reading.restart(metaInterval: nil)
        input.ownTitle = nil
        input.format = nil
        input.live?.label = source.label
        input.live?.dj = source.user.dj
        input.live?.name = source.request.info.displayName.flatMap { $0.isEmpty ? nil : $0 }
        sourceEnded(input)
        input.live?.copiesSource = configuration.recording.keepsSource && station.recorder != nil
        input.paced = true
        input.pace = (now, 0)
        input.set(.connecting)
        Log.notice(
            "\(configuration.name): \(source.label) connected (\(source.request.method) \(source.request.path)"
                + (source.request.userAgent.map { ", \($0)" } ?? "") + "): it plays from its first audio")
    }

    /// The source closed its connection: what it sent before plays out (`takeLive` ends it then).
    func liveClosed(_ index: Int, now: Double) {
        let input = inputs[index]
        input.downloader?.source?.close()
        input.downloader = nil
        input.live?.ending = "disconnected"
        sourceEnded(input)
    }

    /// The source ends: its connection closes (with `answer` when it may still be answered), the desk takes the
    /// next one, and the selector hands back to the other inputs.
    func endLive(_ index: Int, reason: String, answer: [UInt8]? = nil, now: Double) {
        let input = inputs[index]
        let label = input.live?.label ?? "live source"
        input.downloader?.source?.close(answer: answer)
        input.downloader = nil
        input.live?.ending = nil
        sourceEnded(input)
        let wasPlaying = index == selector.playing
        input.forgetConnection(keepingBacklog: false)
        input.set(.waiting(reason))
        input.lastError = reason
        input.format = nil
        station.desk.release()
        if index == fadingOut {
            chain.endOutgoing()
            fadingOut = nil
        }
        if wasPlaying { chain.fadeOut(frames: Self.fadeFrames(Self.shortFade, rate: configuration.commonRate)) }
        selector.failed(index, reason: reason, now: now)
        let next = inputs.indices.first { $0 != index && selector.isHealthy($0, now: now) }
        let back =
            wasPlaying
            ? next.map { "; back to input \(inputs[$0].name)" }
                ?? "; no other input has audio yet: silence until one does"
            : ""
        Log.notice("\(configuration.name): \(label) \(reason)\(back)")
    }

    /// The final answer refusing a source whose audio is not decoded here (after `100 Continue` only).
    static func unsupported(_ error: UnsupportedFormat) -> [UInt8] {
        PublicRouter.text(415, "\(error.description)\n").encoded
    }
}

extension Pipeline {
    /// Why a live source's reading ended, as its log line says it: a stall or a read error's own words.
    func describeEnd(_ error: any Error) -> String {
        if let error = error as? DownloadError { return error.message }
        return "\(error)"
    }
}
