import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The pipeline's inputs: connecting the ones the selector wants (each on its own reconnect schedule), reading
/// every connected one (what each yields is routed in `Pipeline+Routing.swift`) and pacing; the checks on what an
/// input sends are in `Pipeline+InputChecks.swift`.
extension Pipeline {
    // MARK: Connections

    /// Connects each input the selector wants connected whose reconnect schedule is due (a paced input's next
    /// connection — a file's next loop — once the last one played out), and drops a connection no longer wanted
    /// (a cold standby after the station switched up).
    func manageConnections(now: Double) {
        if fadingOut != nil && now - outgoingAudioAt > Self.outgoingPatience {
            // The input fading out stopped delivering (it stalls): the front must not wait for it.
            chain.endOutgoing()
            fadingOut = nil
        }
        for (index, input) in inputs.enumerated() where input.live == nil {
            let wanted = selector.shouldConnect(index, now: now)
            if input.downloader == nil {
                if !wanted, index != selector.playing, case .retrying = input.activity {
                    // Failed while it was needed, not needed now: no longer retried, so connected at once when the
                    // station steps down to it again.
                    input.set(.idle)
                    input.reconnect.again()
                    continue
                }
                guard wanted, input.reconnect.isDue(now: now), input.backlog.isEmpty else { continue }
                connect(index, now: now)
            } else if !wanted && index != selector.playing && index != fadingOut {
                disconnect(index, now: now)
            }
        }
    }

    func connect(_ index: Int, now: Double) {
        let input = inputs[index]
        if let file = input.file, file.passEnded {
            file.passEnded = false
            // The pass's last frame and the Reader's tail, before the next pass's first (no hole at the seam).
            do {
                try endPass(index)
            } catch {
                logLimited(.stageError, .error, "\(configuration.name): \(describe(input)): end of a pass: \(error)")
            }
            if input.packets == input.connection.packetsAtOpen {
                // An empty file, or one without audio: looping it again at once would spin.
                fail(
                    index,
                    DownloadError(
                        .file, url: input.configuration.upstream, "no \(input.reading.expectedAudio) in the file"),
                    now: now)
                return
            }
        }
        var options = Downloader.Options()
        options.connectTimeout = input.configuration.connectTimeout
        options.stallTimeout = input.configuration.stallTimeout
        options.requestICYMetadata = true
        options.chunkSize = 16 * 1024
        options.peerTimeout = PeerTimeout(seconds: configuration.peerTimeout)
        input.set(.connecting)
        do {
            input.downloader = try Downloader(url: input.configuration.upstream, options: options)
            input.connection = .init(openedAt: now, lastAudioAt: now, packets: input.packets, bytes: input.bytesIn)
            // A looping file announces itself once; a network input on every (re)connection.
            input.announced = input.file != nil && input.packets > 0
            input.reading.restart(metaInterval: nil)
            if let file = input.file {
                if let title = file.readTitle() { input.ownTitle = title }
                input.set(.connected)
                input.paced = input.configuration.isPaced
            }
            if index == selector.playing, let title = input.title { offer(title) }
        } catch {
            fail(index, error, now: now)
        }
    }

    /// Drops input `index`'s connection: it is not needed now (not a failure).
    func disconnect(_ index: Int, now: Double) {
        let input = inputs[index]
        input.downloader = nil
        input.forgetConnection()
        input.set(.idle)
        input.reconnect.again()
        selector.idle(index)
        Log.info("\(configuration.name): \(describe(input)) disconnected: not needed while input \(playing.name) plays")
    }

    /// How logs name an input: `upstream` for a station with one, else `input NAME`.
    func describe(_ input: StationInput) -> String {
        inputs.count == 1 ? "upstream" : "input \(input.name)"
    }

    func fail(_ index: Int, _ error: any Error, now: Double) {
        let input = inputs[index]
        if input.live != nil {
            let unsupported = error as? UnsupportedFormat
            let reason = unsupported.map { "refused: \($0)" } ?? Redaction.text(describeEnd(error))
            return endLive(index, reason: reason, answer: unsupported.map(Self.unsupported), now: now)
        }
        input.downloader = nil
        input.forgetConnection(keepingBacklog: index == selector.playing)
        input.reconnects += 1
        local.reconnects += 1
        // Any error's text, not only a DownloadError's, may quote the URL: redacted once, used everywhere.
        let text = Redaction.text("\(error)")
        input.set(.retrying(text))
        input.lastError = text
        local.lastError = text
        let wait = input.reconnect.failed(now: now, random: Double.random(in: 0..<1))
        if index == fadingOut {
            // Its crossfade ends early: its last audio fades out quickly.
            chain.endOutgoing()
            fadingOut = nil
        }
        if index == selector.playing {
            // Its last audio fades out rather than stopping on a sample.
            chain.fadeOut(frames: Self.fadeFrames(Self.shortFade, rate: configuration.commonRate))
        }
        selector.failed(index, reason: text, now: now)
        Log.warning(
            "\(configuration.name): \(describe(input)) \(text); retrying in \(String(format: "%.1f", wait)) s "
                + "(attempt \(input.reconnect.failures))")
    }

    // MARK: Reading

    /// Polls every connected input that may be read; only the last poll may wait (20 ms), and only when nothing
    /// arrived before it, so an iteration waits once however many inputs there are.
    func pullInputs(now: Double) {
        let ready = inputs.indices.filter { index in
            guard let downloader = inputs[index].downloader else { return false }
            guard inputs[index].paced && inputs[index].backlog.isFull else { return true }
            downloader.resting()  // not asked for more: not a stall
            return false
        }
        var received = false
        for (position, index) in ready.enumerated() {
            let wait = position == ready.count - 1 && !received ? 20 : 0
            received = pull(index, timeout: wait, now: now) || received
        }
        if ready.isEmpty && !(playing.paced && !playing.backlog.isEmpty) { usleep(10_000) }
    }

    /// Reads what input `index` has; true when bytes arrived.
    func pull(_ index: Int, timeout: Int, now: Double) -> Bool {
        let input = inputs[index]
        guard let downloader = input.downloader else { return false }
        var received = false
        do {
            let more = try downloader.poll(timeout: timeout) { chunk in
                received = true
                if !input.announced {
                    input.announced = true
                    try connected(index, downloader)
                }
                input.bytesIn += chunk.count
                local.bytesIn += chunk.count
                if input.live?.copiesSource == true { station.recorder?.offer(source: Array(chunk)) }
                if input.paced {
                    input.backlog.append(chunk)
                } else {
                    try feed(index, chunk)
                }
            }
            if !more { ended(index, now: now) }
        } catch {
            takeEvents()
            fail(index, error, now: now)
        }
        return received
    }

    /// The input's stream ended. A file loops; a network stream that ends is an outage of that input.
    func ended(_ index: Int, now: Double) {
        let input = inputs[index]
        if input.live != nil { return liveClosed(index, now: now) }
        input.downloader = nil
        if let file = input.file, configuration.loop {
            // Again once what was read has played out; `connect` checks that this pass had audio.
            file.passEnded = true
            input.reconnect.again()
        } else {
            fail(
                index, DownloadError(.transfer, url: input.configuration.upstream, "the upstream ended the stream"),
                now: now)
        }
    }

    func connected(_ index: Int, _ downloader: Downloader) throws {
        let input = inputs[index]
        try checkFormat(input, downloader.responseHeaders["content-type"])
        let interval = try downloader.icyMetaInterval()
        input.reading.restart(metaInterval: interval)
        input.set(.connected)
        let now = monotonicNow()
        if index == selector.playing { clock.connected() }
        input.connection.lastAudioAt = now
        input.reconnect.connected(now: now)
        let headers = downloader.responseHeaders
        input.paced = input.configuration.paced ?? (input.file != nil || headers["content-length"] != nil)
        input.pace = (now, 0)
        if input.paced && input.file == nil && input.configuration.paced == nil {
            let who = inputs.count == 1 ? "the upstream" : "input \(input.name)"
            Log.info("\(configuration.name): \(who) announced its length: read at real time, nothing dropped")
        }
        guard input.live == nil else { return }  // its connection was logged when it was handed over
        let name = headers["icy-name"].map { " \"\(Sanitized.text($0))\"" } ?? ""
        let what = input.file != nil ? "file opened" : "connected"
        Log.info(
            "\(configuration.name): \(describe(input)) \(what): \(input.configuration.shown)\(name)"
                + (interval.map { ", ICY metadata every \($0) bytes" } ?? ""))
    }

    // MARK: Pacing

    /// Feeds each paced input's read-ahead in 1 KB pieces (about 60 ms at 128 kb/s): the one that plays while the
    /// stream is not ahead of the clock, the others at real time of their own.
    func drainBacklogs() {
        for (index, input) in inputs.enumerated() where !input.backlog.isEmpty {
            do {
                while !input.backlog.isEmpty && mayFeed(index) {
                    try input.backlog.consume(upTo: 1024) { try feed(index, $0) }
                }
            } catch let refusal as DownloadError {
                input.backlog.clear()  // nothing more of this connection is played
                fail(index, refusal, now: monotonicNow())
            } catch let refusal as UnsupportedFormat {
                input.backlog.clear()
                fail(index, refusal, now: monotonicNow())
            } catch {
                // A stage failed on this piece: it is dropped, the next goes on (the connection is fine).
                takeEvents()
                logLimited(.stageError, .error, "\(configuration.name): \(describe(input)): \(error)")
            }
            input.backlog.compact()
        }
    }

    /// Whether a paced input's next piece is due: the stream clock's lead for the one that plays, its own real-time
    /// pace (half a second ahead) for another.
    func mayFeed(_ index: Int) -> Bool {
        let now = monotonicNow()
        if index == selector.playing { return clock.mayFeed(now: now, queued: chain.heldSeconds) }
        let input = inputs[index]
        return input.pace.seconds < now - input.pace.origin + 0.5
    }
}
