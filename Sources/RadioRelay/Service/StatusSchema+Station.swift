import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// A station in `/status.json` (see `StatusSchema.swift`): its own figures, the sums over its outputs (written, not
/// read back), its outputs, pushes, inputs, switches and titles.
extension StationStatus: Codable {
    enum CodingKeys: String, CodingKey {
        case name
        case listenAddress = "listen"
        case alive
        case uptime = "uptime_seconds"
        case upstreamURL = "upstream_url"
        case upstreamState = "upstream_state"
        case upstreamReason = "upstream_reason"
        case lastError = "last_error"
        case title
        case format = "input"
        case opusBitrate = "opus_bitrate"
        case listeners
        case httpListeners = "listeners_http"
        case peakListeners = "peak_listeners"
        case bytesOut = "bytes_out"
        case bytesIn = "bytes_in"
        case connections, refusals
        case slowMoves = "slow_moves"
        case slowDrops = "slow_drops"
        case chattyDrops = "chatty_drops"
        case proxyRejected = "proxy_header_failures"
        case reconnects
        case decodeErrors = "decode_errors"
        case silenceSeconds = "silence_seconds"
        case droppedSeconds = "dropped_seconds"
        case pausedSeconds = "paused_seconds"
        case encodedSeconds = "encoded_seconds"
        case limiter
        case packets
        case decodedPackets = "decoded_packets"
        case readers, encoders
        case outputs, pushes
        case playingInput = "input_playing"
        case forcedInput = "input_forced"
        case inputs, switches
        case switchCounts = "switch_counts"
        case history
        case archive
        case archiveMP3 = "archive_mp3"
        case recordings
    }

    package func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encode(name, forKey: .name)
        try out.encode(listenAddress, forKey: .listenAddress)
        try out.encode(alive, forKey: .alive)
        try out.encodeSeconds(uptime, forKey: .uptime)
        try out.encode(upstreamURL, forKey: .upstreamURL)
        try out.encode(upstream.phase, forKey: .upstreamState)
        try out.encodeOrNull(upstream.reason, forKey: .upstreamReason)
        try out.encodeOrNull(lastError, forKey: .lastError)
        try out.encodeOrNull(title, forKey: .title)
        try out.encodeOrNull(format, forKey: .format)
        try out.encode(opusBitrate, forKey: .opusBitrate)
        try out.encode(listeners, forKey: .listeners)
        try out.encode(httpListeners, forKey: .httpListeners)
        try out.encode(peakListeners, forKey: .peakListeners)
        try out.encode(bytesOut, forKey: .bytesOut)
        try out.encode(bytesIn, forKey: .bytesIn)
        try out.encode(connections, forKey: .connections)
        try out.encode(refusals, forKey: .refusals)
        try out.encode(slowMoves, forKey: .slowMoves)
        try out.encode(slowDrops, forKey: .slowDrops)
        try out.encode(chattyDrops, forKey: .chattyDrops)
        try out.encode(proxyRejected, forKey: .proxyRejected)
        try out.encode(reconnects, forKey: .reconnects)
        try out.encode(decodeErrors, forKey: .decodeErrors)
        try out.encodeSeconds(silenceSeconds, forKey: .silenceSeconds)
        try out.encodeSeconds(droppedSeconds, forKey: .droppedSeconds)
        try out.encodeSeconds(pausedSeconds, forKey: .pausedSeconds)
        try out.encodeSeconds(encodedSeconds, forKey: .encodedSeconds)
        try out.encodeOrNull(limiter, forKey: .limiter)
        try out.encode(packets, forKey: .packets)
        try out.encode(decodedPackets, forKey: .decodedPackets)
        try out.encode(readers, forKey: .readers)
        try out.encode(encoders, forKey: .encoders)
        try out.encode(outputs, forKey: .outputs)
        try out.encode(pushes, forKey: .pushes)
        try out.encodeOrNull(playingInput, forKey: .playingInput)
        try out.encodeOrNull(forcedInput, forKey: .forcedInput)
        try out.encode(inputs, forKey: .inputs)
        try out.encode(switches, forKey: .switches)
        try out.encode(switchCounts, forKey: .switchCounts)
        try out.encode(history, forKey: .history)
        try out.encodeOrNull(archive, forKey: .archive)
        try out.encodeOrNull(archiveMP3, forKey: .archiveMP3)
        try out.encodeOrNull(recordings, forKey: .recordings)
    }

    package init(from decoder: any Swift.Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try values.decode(String.self, forKey: .name))
        listenAddress = try values.decodeIfPresent(String.self, forKey: .listenAddress) ?? ""
        alive = try values.decode(Bool.self, forKey: .alive)
        uptime = try values.decodeIfPresent(Double.self, forKey: .uptime) ?? 0
        upstreamURL = try values.decodeIfPresent(String.self, forKey: .upstreamURL) ?? ""
        let reason = try values.decodeIfPresent(String.self, forKey: .upstreamReason)
        upstream =
            switch try values.decode(StationState.Upstream.Phase.self, forKey: .upstreamState) {
            case .connecting: .connecting
            case .connected: .connected
            case .retrying: .retrying(reason: reason ?? "")
            }
        lastError = try values.decodeIfPresent(String.self, forKey: .lastError)
        title = try values.decodeIfPresent(String.self, forKey: .title)
        format = try values.decodeIfPresent(FormatStatus.self, forKey: .format)
        bytesIn = try values.decodeIfPresent(Int.self, forKey: .bytesIn) ?? 0
        reconnects = try values.decodeIfPresent(Int.self, forKey: .reconnects) ?? 0
        decodeErrors = try values.decodeIfPresent(Int.self, forKey: .decodeErrors) ?? 0
        silenceSeconds = try values.decodeIfPresent(Double.self, forKey: .silenceSeconds) ?? 0
        droppedSeconds = try values.decodeIfPresent(Double.self, forKey: .droppedSeconds) ?? 0
        pausedSeconds = try values.decodeIfPresent(Double.self, forKey: .pausedSeconds) ?? 0
        encodedSeconds = try values.decodeIfPresent(Double.self, forKey: .encodedSeconds) ?? 0
        limiter = try values.decodeIfPresent(StationState.Limiter.self, forKey: .limiter)
        packets = try values.decodeIfPresent(Int.self, forKey: .packets) ?? 0
        decodedPackets = try values.decodeIfPresent(Int.self, forKey: .decodedPackets) ?? 0
        readers = try values.decodeIfPresent(Int.self, forKey: .readers) ?? 0
        encoders = try values.decodeIfPresent(Int.self, forKey: .encoders) ?? 0
        outputs = try values.decode([OutputStatus].self, forKey: .outputs)
        pushes = try values.decodeIfPresent([PushStatus].self, forKey: .pushes) ?? []
        playingInput = try values.decodeIfPresent(String.self, forKey: .playingInput)
        forcedInput = try values.decodeIfPresent(String.self, forKey: .forcedInput)
        inputs = try values.decode([InputState].self, forKey: .inputs)
        switches = try values.decodeIfPresent([InputSwitch].self, forKey: .switches) ?? []
        switchCounts = try values.decodeIfPresent([String: Int].self, forKey: .switchCounts) ?? [:]
        history = try values.decodeIfPresent([HistoryStatus].self, forKey: .history) ?? []
        archive = try values.decodeIfPresent(ArchiveFigures.self, forKey: .archive)
        archiveMP3 = try values.decodeIfPresent(ArchiveFigures.self, forKey: .archiveMP3)
        recordings = try values.decodeIfPresent(RecordingFigures.self, forKey: .recordings)
    }
}

/// One output (`rendition` `main` for the station's own).
extension OutputStatus: Codable {
    enum CodingKeys: String, CodingKey {
        case rendition, mount
        case listenAddress = "listen"
        case format
        case opusBitrate = "opus_bitrate"
        case channels, listeners
        case httpListeners = "listeners_http"
        case peakListeners = "peak_listeners"
        case bytesOut = "bytes_out"
        case pagesPublished = "pages"
        case connections, refusals
        case slowMoves = "slow_moves"
        case slowDrops = "slow_drops"
        case chattyDrops = "chatty_drops"
        case sessionLimitEnds = "session_limit_ends"
        case proxyRejected = "proxy_header_failures"
        case peakListenersHour = "peak_listeners_hour"
        case listeningSeconds = "listening_seconds"
        case sessions
        case sessionSeconds = "session_seconds"
        case endedSessionSeconds = "ended_session_seconds"
        case loopWakeups = "loop_wakeups"
        case hls
    }

    /// The session buckets' labels: each bound in seconds, then `+Inf`.
    package static let sessionLabels = ListenerStatistics.sessionBounds.map { String(Int($0)) } + ["+Inf"]

    package func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encode(rendition, forKey: .rendition)
        try out.encode(mount, forKey: .mount)
        try out.encode(listenAddress, forKey: .listenAddress)
        try out.encode(format, forKey: .format)
        try out.encode(opusBitrate, forKey: .opusBitrate)
        try out.encode(channels, forKey: .channels)
        try out.encode(listeners, forKey: .listeners)
        try out.encode(httpListeners, forKey: .httpListeners)
        try out.encode(peakListeners, forKey: .peakListeners)
        try out.encode(bytesOut, forKey: .bytesOut)
        try out.encode(pagesPublished, forKey: .pagesPublished)
        try out.encode(connections, forKey: .connections)
        try out.encode(refusals, forKey: .refusals)
        try out.encode(slowMoves, forKey: .slowMoves)
        try out.encode(slowDrops, forKey: .slowDrops)
        try out.encode(chattyDrops, forKey: .chattyDrops)
        try out.encode(sessionLimitEnds, forKey: .sessionLimitEnds)
        try out.encode(proxyRejected, forKey: .proxyRejected)
        try out.encode(peakListenersHour, forKey: .peakListenersHour)
        try out.encode((listeningSeconds * 10).rounded() / 10, forKey: .listeningSeconds)
        try out.encode(sessionBuckets.reduce(0, +), forKey: .sessions)
        try out.encode(
            Dictionary(zip(Self.sessionLabels, sessionBuckets), uniquingKeysWith: +), forKey: .sessionSeconds)
        try out.encodeSeconds(endedSessionSeconds, forKey: .endedSessionSeconds)
        try out.encode(loopWakeups, forKey: .loopWakeups)
        try out.encodeOrNull(hls, forKey: .hls)
    }

    package init(from decoder: any Swift.Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(rendition: try values.decode(String.self, forKey: .rendition))
        mount = try values.decodeIfPresent(String.self, forKey: .mount) ?? ""
        listenAddress = try values.decodeIfPresent(String.self, forKey: .listenAddress) ?? ""
        format = try values.decodeIfPresent(String.self, forKey: .format) ?? format
        opusBitrate = try values.decodeIfPresent(Int.self, forKey: .opusBitrate) ?? 0
        channels = try values.decodeIfPresent(Int.self, forKey: .channels) ?? channels
        listeners = try values.decode(Int.self, forKey: .listeners)
        httpListeners = try values.decodeIfPresent(Int.self, forKey: .httpListeners) ?? 0
        peakListeners = try values.decodeIfPresent(Int.self, forKey: .peakListeners) ?? 0
        bytesOut = try values.decodeIfPresent(Int.self, forKey: .bytesOut) ?? 0
        pagesPublished = try values.decodeIfPresent(Int.self, forKey: .pagesPublished) ?? 0
        connections = try values.decodeIfPresent(Int.self, forKey: .connections) ?? 0
        refusals = try values.decodeIfPresent(Int.self, forKey: .refusals) ?? 0
        slowMoves = try values.decodeIfPresent(Int.self, forKey: .slowMoves) ?? 0
        slowDrops = try values.decodeIfPresent(Int.self, forKey: .slowDrops) ?? 0
        chattyDrops = try values.decodeIfPresent(Int.self, forKey: .chattyDrops) ?? 0
        sessionLimitEnds = try values.decodeIfPresent(Int.self, forKey: .sessionLimitEnds) ?? 0
        proxyRejected = try values.decodeIfPresent(Int.self, forKey: .proxyRejected) ?? 0
        peakListenersHour = try values.decodeIfPresent(Int.self, forKey: .peakListenersHour) ?? 0
        listeningSeconds = try values.decodeIfPresent(Double.self, forKey: .listeningSeconds) ?? 0
        let buckets = try values.decodeIfPresent([String: Int].self, forKey: .sessionSeconds) ?? [:]
        sessionBuckets = Self.sessionLabels.map { buckets[$0] ?? 0 }
        endedSessionSeconds = try values.decodeIfPresent(Double.self, forKey: .endedSessionSeconds) ?? 0
        loopWakeups = try values.decodeIfPresent(Int.self, forKey: .loopWakeups) ?? 0
        hls = try values.decodeIfPresent(HLSStatus.self, forKey: .hls)
    }
}

/// A station's true-peak limiter: its ceiling at the encoders' input (dBTP, to a tenth), the deepest reduction over the last second or two (dB) and the
/// seconds of audio it reduced.
extension StationState.Limiter: Codable {
    enum CodingKeys: String, CodingKey {
        case ceiling = "encoder_ceiling_dbtp"
        case reduction = "reduction_db"
        case limitedSeconds = "limited_seconds"
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encode((ceiling * 10).rounded() / 10, forKey: .ceiling)
        try out.encode((reduction * 10).rounded() / 10, forKey: .reduction)
        try out.encodeSeconds(limitedSeconds, forKey: .limitedSeconds)
    }

    public init(from decoder: any Swift.Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            ceiling: try values.decode(Double.self, forKey: .ceiling),
            reduction: try values.decode(Double.self, forKey: .reduction),
            limitedSeconds: try values.decode(Double.self, forKey: .limitedSeconds))
    }
}
