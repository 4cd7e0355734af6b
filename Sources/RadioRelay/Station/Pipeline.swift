import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// The station's pipeline thread: pulls the upstream, runs the stage chain, publishes pages, and carries out the
/// stream clock's and the reconnect schedule's decisions. Confined to its thread.
final class Pipeline {
    var configuration: StationConfiguration
    let station: Station
    /// The station's settings version `configuration` was taken at.
    var settingsVersion = 0
    /// One per output, in the order of the chain's Encoders.
    /// The station's outputs: each one's Broadcaster, and its HLS stream if it has one.
    let outputs: [StationOutput]
    let shared: LockedBox<StationState>
    var local = StationState()
    /// New titles at most once a second, the newest winning.
    var titles = TitleThrottle()
    let chain: any PipelineChain
    var clock: StreamClock
    var reconnect: ReconnectSchedule

    var downloader: Downloader?
    /// The current connection's first bytes were seen (and logged).
    var announced = false
    /// When the current connection was opened, and the packet count then: an upstream that sends bytes but no
    /// audio for `noAudioTimeout` counts as down. `file`: it reads a file (classified once, not on every iteration).
    var connection = (openedAt: 0.0, packets: 0, lastAudioAt: 0.0, lastPackets: 0, bytesAtOpen: 0, file: false)
    /// Whether the current upstream is read at real time (a file, `--pace yes`, or with `--pace auto` an HTTP
    /// response that announced its length: a finite upstream is held back, never trimmed).
    var paced = false
    /// Bytes held for a paced upstream: read ahead of the clock, fed to the stages as the clock reaches them.
    var backlog = Backlog(limit: 64 * 1024)
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
        reconnect = ReconnectSchedule(delays: configuration.reconnectDelay)
    }

    /// Audio not yet handed to the outputs.
    var queued: Double { chain.queuedSeconds }
    /// Drops and pauses seen by the last log line about them (logged at most every `reportInterval`).
    var reported = (dropped: 0.0, paused: 0.0, at: -Double.infinity)
    static let reportInterval = 60.0

    /// Runs until `thread` is asked to stop; every iteration beats its heartbeat, whatever the upstream does.
    func run(in thread: ServiceThread) {
        clock = StreamClock(settings: clock.settings, now: monotonicNow())
        var lastPublishedState = monotonicNow()
        paced = configuration.isPaced
        let hang = TestHooks.hangPipeline.flatMap { $0.station == configuration.name ? monotonicNow() + $0.after : nil }
        while !thread.isStopping {
            if let hang, monotonicNow() >= hang {
                Log.warning("\(configuration.name): test hook: the pipeline hangs now (RADIO_RELAY_TEST_HANG_PIPELINE)")
                while !thread.isStopping { usleep(100_000) }
                break
            }
            thread.beat()
            reconfigure()
            let now = monotonicNow()
            // A paced upstream's next connection (a file's next loop) starts once the last one has played out.
            if downloader == nil && reconnect.isDue(now: now) && backlog.isEmpty { connect(now: now) }
            if let downloader, !paced || !backlog.isFull {
                pull(downloader, now: now)
            } else if !paced || backlog.isEmpty {
                usleep(10_000)
            }
            if paced { drainBacklog() }
            checkAudio(now: monotonicNow())
            advanceClock(paced: paced)
            if paced, backlog.isFull || downloader == nil, let nap = clock.nap(now: monotonicNow(), queued: queued) {
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

    // MARK: Upstream

    /// A file's pass ended: its next one starts only if this one yielded audio.
    var passEnded = false

    func connect(now: Double) {
        if passEnded {
            passEnded = false
            if chain.packetsSeen == connection.packets {
                // An empty file, or one without MP3 audio: looping it again at once would spin.
                fail(DownloadError(.file, url: configuration.upstream, "no MPEG audio in the file"), now: now)
                return
            }
        }
        var options = Downloader.Options()
        options.connectTimeout = configuration.connectTimeout
        options.stallTimeout = configuration.stallTimeout
        options.requestICYMetadata = true
        options.chunkSize = 16 * 1024
        local.upstream = .connecting
        do {
            downloader = try Downloader(url: configuration.upstream, options: options)
            let packets = chain.packetsSeen
            connection = (now, packets, now, packets, local.bytesIn, configuration.isFileUpstream)
            // A looping file announces itself once; a network upstream on every (re)connection.
            announced = configuration.isFileUpstream && local.packets > 0
            chain.restart(metaInterval: nil)
            if configuration.isFileUpstream { local.upstream = .connected }
        } catch {
            fail(error, now: now)
        }
    }

    func fail(_ error: any Error, now: Double) {
        downloader = nil
        // What a finite upstream sent before it ended still plays (the next connection waits for it).
        local.reconnects += 1
        // Any error's text, not only a DownloadError's, may quote the URL: redacted once, used everywhere.
        let text = Redaction.text("\(error)")
        local.upstream = .retrying(reason: text)
        local.lastError = text
        let wait = reconnect.failed(now: now, random: Double.random(in: 0..<1))
        Log.warning(
            "\(configuration.name): upstream \(text); retrying in \(String(format: "%.1f", wait)) s "
                + "(attempt \(reconnect.failures))")
    }

    func pull(_ downloader: Downloader, now: Double) {
        do {
            let more = try downloader.poll(timeout: 20) { chunk in
                if !announced {
                    announced = true
                    try connected(downloader)
                }
                local.bytesIn += chunk.count
                if paced {
                    backlog.append(chunk)
                } else {
                    try chain.feed(chunk)
                    takeEvents()
                    try checkRefusal()
                }
            }
            if !more {
                // The upstream ended. A file loops; a network stream that ends is an outage, not the end of ours.
                self.downloader = nil
                if configuration.isFileUpstream && configuration.loop {
                    // Again once what was read has played out; `connect` checks that this pass had audio.
                    passEnded = true
                    reconnect.again()
                } else {
                    fail(
                        DownloadError(.transfer, url: configuration.upstream, "the upstream ended the stream"),
                        now: now)
                }
            }
        } catch {
            takeEvents()
            fail(error, now: now)
        }
    }

    func connected(_ downloader: Downloader) throws {
        try checkFormat(downloader.responseHeaders["content-type"])
        let interval = try downloader.icyMetaInterval()
        chain.restart(metaInterval: interval)
        local.upstream = .connected
        clock.connected()
        connection.lastAudioAt = monotonicNow()
        reconnect.connected(now: connection.lastAudioAt)
        let headers = downloader.responseHeaders
        paced = configuration.paced ?? (configuration.isFileUpstream || headers["content-length"] != nil)
        if paced && !configuration.isFileUpstream && configuration.paced == nil {
            Log.info("\(configuration.name): the upstream announced its length: read at real time, nothing dropped")
        }
        let station = headers["icy-name"].map { " \"\(Sanitized.text($0))\"" } ?? ""
        let what = configuration.isFileUpstream ? "upstream file opened" : "upstream connected"
        Log.info(
            "\(configuration.name): \(what): \(Redaction.text(configuration.upstream))\(station)"
                + (interval.map { ", ICY metadata every \($0) bytes" } ?? ""))
    }

    // MARK: Pacing

    /// Feeds the backlog in 1 KB pieces (about 60 ms at 128 kb/s) while the stream is not ahead of the clock.
    func drainBacklog() {
        do {
            while !backlog.isEmpty && clock.mayFeed(now: monotonicNow(), queued: queued) {
                try backlog.consume(upTo: 1024) { try chain.feed($0) }
                takeEvents()
                try checkRefusal()
            }
        } catch let refusal as DownloadError {
            fail(refusal, now: monotonicNow())  // the stream cannot be relayed: this connection ends
        } catch {
            // A stage failed on this piece: it is dropped, the next goes on (the upstream connection is fine).
            takeEvents()
            logLimited(.stageError, .error, "\(configuration.name): \(error)")
        }
        backlog.compact()
    }

    // MARK: Stages

    /// The chain refused the upstream's stream (a multichannel edge upstream): the connection ends with the reason.
    func checkRefusal() throws(DownloadError) {
        guard let refusal = chain.takeRefusal() else { return }
        backlog.clear()  // nothing more of this connection is played
        throw DownloadError(.transfer, url: configuration.upstream, refusal)
    }

    func takeEvents() {
        for event in chain.takeEvents() {
            switch event {
            case .format(let format):
                let now = local.format == nil ? "" : " now"
                logLimited(.format, .info, "\(configuration.name): upstream format\(now) \(format)")
                local.format = format
            case .metadata(let fields):
                guard let title = Sanitized.title(in: fields), title != local.title || titles.held != nil else {
                    continue
                }
                if let shown = titles.offer(title, now: monotonicNow()) { show(shown) }
            }
        }
    }

    /// A title the throttle let through: the station's state, and the access log's line.
    func show(_ shown: (title: String, skipped: Int)) {
        guard shown.title != local.title else { return }
        local.title = shown.title
        for output in outputs {
            output.hls?.title(shown.title)
            if output.format == .mp3 { output.broadcaster.setStreamTitle(shown.title) }
        }
        let skipped = shown.skipped > 0 ? " (\(shown.skipped) titles in between not shown)" : ""
        Log.info("\(configuration.name): now playing: \(shown.title)\(skipped)")
        publishState()
    }

    /// Carries out one step of the stream clock: drops what runs too far ahead, encodes what is due (with the
    /// clock's rate correction), fills silence while the upstream is away or late.
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
        chain.report(into: &local)
        let snapshot = local
        shared.withLock { $0 = snapshot }
    }
}

@available(*, unavailable) extension Pipeline: Sendable {}
