import Foundation
import Synchronization

/// The station's pipeline thread: pulls the upstream, runs the stages synchronously, publishes pages, and keeps
/// the stream's clock. Confined to its thread.
final class Pipeline {
    private let configuration: StationConfiguration
    private let encoder: Encoder
    private let broadcaster: Broadcaster
    private let shared: LockedBox<StationState>
    private var local = StationState()

    private var downloader: Downloader?
    private var icy: ICYDemuxer?
    /// Frames go on as soon as they are complete: a live listener should not wait a frame for the next header.
    private let parser = Parser(confirmsFrames: false)
    private var reader: Reader
    private var retryAt = 0.0
    private var retryDelay: Double
    private var clockStart = 0.0
    /// Seconds of audio the stream may run ahead of the wall clock when the input is paced.
    private let paceLead = 0.25
    private var pcmHandlingError: Error?
    /// The current connection's first bytes were seen (and logged).
    private var announced = false

    init(station: Station, encoder: Encoder, state: LockedBox<StationState>) {
        self.configuration = station.configuration
        self.encoder = encoder
        self.broadcaster = station.broadcaster
        self.shared = state
        self.retryDelay = configuration.reconnectDelay.lowerBound
        // The configuration was validated, so the Reader's only failure (an unsupported rate) cannot happen here.
        self.reader = try! Reader(commonRate: configuration.commonRate)
    }

    private var mediaTime: Double { Double(encoder.samplesIn) / 48_000 }

    func run(until stopping: borrowing Atomic<Bool>) {
        clockStart = monotonicNow()
        var lastPublishedState = monotonicNow()
        let paced = configuration.isPaced
        while !stopping.load(ordering: .acquiring) {
            let now = monotonicNow()
            // A paced upstream's next connection (a file's next loop) starts once the last one has played out.
            if downloader == nil && now >= retryAt && backlogCount == 0 { connect(now: now) }
            if let downloader, !paced || backlogCount < Self.backlogLimit {
                pull(downloader, now: now)
            } else if !paced || backlogCount == 0 {
                usleep(10_000)
            }
            if paced {
                drainBacklog()
                let ahead = mediaTime - (monotonicNow() - clockStart) - paceLead
                if ahead > 0 && (backlogCount >= Self.backlogLimit || downloader == nil) {
                    usleep(UInt32(min(0.02, ahead) * 1_000_000) + 1000)
                }
            }
            fillSilence()
            if monotonicNow() - lastPublishedState > 0.1 {
                publishState()
                lastPublishedState = monotonicNow()
            }
        }
        publishState()
    }

    // MARK: Upstream

    private func connect(now: Double) {
        var options = Downloader.Options()
        options.connectTimeout = configuration.connectTimeout
        options.stallTimeout = configuration.stallTimeout
        options.requestICYMetadata = true
        options.chunkSize = 16 * 1024
        local.upstream = .connecting
        do {
            downloader = try Downloader(url: configuration.upstream, options: options)
            icy = nil
            // A looping file announces itself once; a network upstream on every (re)connection.
            announced = configuration.isFileUpstream && local.packets > 0
            parser.reset()
            if configuration.isFileUpstream { local.upstream = .connected }
        } catch {
            fail(error, now: now)
        }
    }

    private func fail(_ error: Error, now: Double) {
        downloader = nil
        icy = nil
        local.reconnects += 1
        local.upstream = .retrying(reason: "\(error)")
        retryAt = now + retryDelay
        Log.warning("\(configuration.name): upstream \(error); retrying in \(String(format: "%.0f", retryDelay)) s")
        retryDelay = min(retryDelay * 2, configuration.reconnectDelay.upperBound)
    }

    private func pull(_ downloader: Downloader, now: Double) {
        do {
            let more = try downloader.poll(timeout: 20) { chunk in
                if !announced {
                    announced = true
                    connected(downloader)
                }
                local.bytesIn += chunk.count
                if configuration.isPaced {
                    backlog.append(contentsOf: chunk)
                } else {
                    demuxAndFeed(chunk)
                }
            }
            if let error = pcmHandlingError {
                pcmHandlingError = nil
                throw error
            }
            if !more {
                // The upstream ended. A file loops; a network stream that ends is an outage, not the end of ours.
                self.downloader = nil
                if configuration.isFileUpstream && configuration.loop {
                    retryAt = 0
                    retryDelay = configuration.reconnectDelay.lowerBound
                } else {
                    fail(DownloadError(.transfer, url: configuration.upstream, "the upstream ended the stream"),
                         now: now)
                }
            }
        } catch {
            fail(error, now: now)
        }
    }

    private func connected(_ downloader: Downloader) {
        if let interval = downloader.icyMetaInterval { icy = ICYDemuxer(interval: interval) }
        local.upstream = .connected
        retryDelay = configuration.reconnectDelay.lowerBound
        let headers = downloader.responseHeaders
        let station = headers["icy-name"].map { " \"\($0)\"" } ?? ""
        let what = configuration.isFileUpstream ? "upstream file opened" : "upstream connected"
        Log.info("\(configuration.name): \(what): \(configuration.upstream)\(station)"
                 + (icy.map { ", ICY metadata every \($0.interval) bytes" } ?? ""))
    }

    private func metadata(_ fields: [String: String]) {
        guard let title = fields["StreamTitle"], title != local.title else { return }
        local.title = title
        Log.info("\(configuration.name): now playing: \(title)")
        publishState()
    }

    // MARK: Pacing

    /// Bytes held for a paced upstream: read ahead of the clock, fed to the stages as the clock reaches them.
    private var backlog: [UInt8] = []
    private var backlogStart = 0
    /// At most this much is read ahead; then the upstream is not read (TCP holds the rest back).
    static let backlogLimit = 64 * 1024

    private var backlogCount: Int { backlog.count - backlogStart }

    /// Feeds the backlog in 1 KB pieces (about 60 ms at 128 kb/s) while the stream is not ahead of the clock.
    private func drainBacklog() {
        while backlogCount > 0 && mediaTime <= monotonicNow() - clockStart + paceLead {
            let n = min(1024, backlogCount)
            backlog.withUnsafeBytes { demuxAndFeed(UnsafeRawBufferPointer(rebasing: $0[backlogStart..<backlogStart + n])) }
            backlogStart += n
        }
        if backlogStart == backlog.count {
            backlog.removeAll(keepingCapacity: true)
            backlogStart = 0
        } else if backlogStart > Self.backlogLimit {
            backlog.removeFirst(backlogStart)
            backlogStart = 0
        }
        if let error = pcmHandlingError {
            pcmHandlingError = nil
            Log.error("\(configuration.name): \(error)")
        }
    }

    // MARK: Stages

    private func demuxAndFeed(_ chunk: UnsafeRawBufferPointer) {
        if var demuxer = icy {
            demuxer.demux(chunk, audio: { self.feed($0) }, metadata: { self.metadata($0) })
            icy = demuxer
        } else {
            feed(chunk)
        }
    }

    private func feed(_ bytes: UnsafeRawBufferPointer) {
        parser.parse(bytes) { event in
            switch event {
            case .format(let format):
                if local.format != nil { Log.info("\(configuration.name): upstream format now \(format)") }
                else { Log.info("\(configuration.name): upstream format \(format)") }
                local.format = format
            case .packet(let packet):
                local.packets += 1
                do {
                    let pcm = try reader.read(packet)
                    if !pcm.isEmpty { broadcaster.publish(try encoder.encode(pcm)) }
                } catch {
                    pcmHandlingError = error
                }
            }
        }
        local.skippedBytes = parser.statistics.bytesSkipped
        local.decodeErrors = reader.statistics.decodeErrors
    }

    /// Keeps the stream at real-time pace while the upstream is away or behind.
    private func fillSilence() {
        let wall = monotonicNow() - clockStart
        let behind = wall - mediaTime
        guard behind > configuration.silenceAfter else { return }
        let frames = Int((behind - configuration.silenceAfter / 2) * Double(configuration.commonRate))
        guard frames > 0 else { return }
        do {
            broadcaster.publish(try encoder.encodeSilence(frames: frames))
            local.silenceSeconds += Double(frames) / Double(configuration.commonRate)
        } catch {
            Log.error("\(configuration.name): encoding silence failed: \(error)")
        }
    }

    private func publishState() {
        local.encodedSeconds = mediaTime
        let snapshot = local
        shared.withLock { $0 = snapshot }
    }
}

@available(*, unavailable) extension Pipeline: Sendable {}
