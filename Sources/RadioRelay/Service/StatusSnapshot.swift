import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// One moment of the server as the status endpoint shows it: plain values, read once from the stations (their
/// `StationState` through its lock, the Broadcaster's atomic counters), so that the reports made from it
/// (`StatusReport`, `MetricsReport`) are pure functions, tested without threads or sockets.
package struct StatusSnapshot: Sendable, Equatable {
    package var version = RadioRelayVersion.string
    /// Seconds since the server started.
    package var uptime = 0.0
    /// The listener places taken and allowed across all stations (`ListenerBudget`), when known.
    package var budget: BudgetStatus?
    package var stations: [StationStatus] = []
    /// The server's own loops (the HTTP front end, the status endpoint) and their wake-ups so far.
    package var loops: [LoopStatus] = []
    /// The admitted listeners, oldest first (at most `listedListeners`), and how many there are in all.
    package var listeners: [ListenerStatus] = []
    package var listenersTotal = 0
    /// Listeners refused since start, by reason (`AdmissionRefusal`).
    package var refusals: [RefusalStatus] = []
    /// Listeners sent to a station's `overflow` URL since start (counted among the refusals too, by their reason).
    package var redirects = 0
    /// The protected stations' backend calls and htpasswd checks since start.
    package var authentication = AuthenticationStatus()
    /// Listeners listed at most (the rest are counted in `listenersTotal`): the answer stays small with any crowd.
    package static let listedListeners = 1000

    package init(version: String = RadioRelayVersion.string, uptime: Double = 0, stations: [StationStatus] = []) {
        self.version = version
        self.uptime = uptime
        self.stations = stations
    }

    /// Reads every station now. `alive[i]` says whether station `i`'s threads beat recently (see `Watchdog`);
    /// a missing entry counts as alive.
    package init(stations: [Station], uptime: Double, alive: [Bool]) {
        self.init(uptime: uptime)
        self.stations = stations.indices.map { index in
            StationStatus(stations[index], alive: index < alive.count ? alive[index] : true)
        }
    }

    /// Every server loop's wake-ups now.
    package init(
        stations: [Station], uptime: Double, alive: [Bool], loops: [(String, LoopActivity)],
        budget: ListenerBudget? = nil
    ) {
        self.init(stations: stations, uptime: uptime, alive: alive)
        self.loops = loops.map { LoopStatus(name: $0.0, wakeups: $0.1.wakeups.load(ordering: .relaxed)) }
        self.budget = budget.map {
            BudgetStatus(used: $0.open.load(ordering: .relaxed), limit: $0.limit.load(ordering: .relaxed))
        }
    }

    /// The admitted listeners of `roster` (the first `listedListeners` by ID), into `listeners` and
    /// `listenersTotal`: what `/status.json` adds to the figures the other reports share.
    package mutating func list(_ roster: ListenerRoster, now: Double = monotonicNow()) {
        let (entries, total) = roster.list(limit: Self.listedListeners)
        listeners = entries.map { ListenerStatus($0, now: now) }
        listenersTotal = total
    }

    /// True when every station's threads are alive (the `/health` answer).
    package var isHealthy: Bool { stations.allSatisfy(\.alive) }
}

/// One station in a `StatusSnapshot`.
package struct StationStatus: Sendable, Equatable {
    package var name: String
    /// Where listeners connect (`ADDRESS:PORT`).
    package var listenAddress = ""
    /// The upstream URL without credentials (`Redaction`).
    package var upstreamURL = ""
    package var upstream = StationState.Upstream.connecting
    package var lastError: String?
    package var title: String?
    /// The input's audio as the Parser found it, once known.
    package var format: FormatStatus?
    package var bytesIn = 0
    package var reconnects = 0
    package var decodeErrors = 0
    package var silenceSeconds = 0.0
    package var droppedSeconds = 0.0
    package var pausedSeconds = 0.0
    package var encodedSeconds = 0.0
    /// Its true-peak limiter, nil when it has none.
    package var limiter: StationState.Limiter?
    /// MPEG frames parsed and decoded (equal: one decode for all outputs), Readers made (1) and Encoders fed (one
    /// per output).
    package var packets = 0
    package var decodedPackets = 0
    package var readers = 0
    package var encoders = 0
    /// Its pipeline and network loops beat within the allowance.
    package var alive = true
    /// The main output first, then the renditions.
    package var outputs: [OutputStatus] = []
    /// Its pushes to Icecast, in the configuration's order.
    package var pushes: [PushStatus] = []
    /// Its inputs in priority order, the one that plays, the force, the newest switches and all switches by reason.
    package var inputs: [InputState] = []
    package var playingInput: String?
    /// 0 while the station plays its first input (or a live source), n while it plays the input n places below.
    package var playingRank: Int {
        let ranked = inputs.filter { $0.kind != .live }
        guard let playingInput, let index = ranked.firstIndex(where: { $0.name == playingInput }) else { return 0 }
        return index
    }
    package var forcedInput: String?
    package var switches: [InputSwitch] = []
    package var switchCounts: [String: Int] = [:]
    /// The last titles, newest first.
    package var history: [HistoryStatus] = []
    /// Seconds since the station started (a reload that restarts it starts this again).
    package var uptime = 0.0
    /// Its archive writers' figures (`archive = DIR`): the main output's, the MP3 output's.
    package var archive: ArchiveFigures?
    package var archiveMP3: ArchiveFigures?
    /// Its recorder's figures (`record_live = DIR`).
    package var recordings: RecordingFigures?

    package init(name: String) { self.name = name }

    /// The main output's Opus target, bits per second.
    package var opusBitrate: Int { outputs.first?.opusBitrate ?? 0 }
    /// Sums over the outputs (`peakListeners`: the sum of their peaks).
    package var listeners: Int { total(\.listeners) }
    package var peakListeners: Int { total(\.peakListeners) }
    package var bytesOut: Int { total(\.bytesOut) }
    package var connections: Int { total(\.connections) }
    /// Connections closed at once: station or server full, or too many from one address.
    package var refusals: Int { total(\.refusals) }
    /// Listeners moved to the live edge after falling behind.
    package var slowMoves: Int { total(\.slowMoves) }
    /// Listeners disconnected for falling behind again.
    package var slowDrops: Int { total(\.slowDrops) }
    /// Listeners disconnected for sending too much.
    package var chattyDrops: Int { total(\.chattyDrops) }
    /// Of `listeners`, those that came over HTTP.
    package var httpListeners: Int { total(\.httpListeners) }
    /// Connections closed for a missing, invalid or late PROXY header.
    package var proxyRejected: Int { total(\.proxyRejected) }

    private func total(_ figure: (OutputStatus) -> Int) -> Int { outputs.reduce(0) { $0 + figure($1) } }

    init(_ station: Station, alive: Bool) {
        self.init(name: station.name)
        let state = station.state
        outputs = station.outputs.map(OutputStatus.init)
        // The MP3 pass-through's channels are the upstream's (0 before it said).
        for index in outputs.indices where outputs[index].format == "mp3" {
            outputs[index].channels = state.format?.channels ?? 0
        }
        listenAddress = station.listenAddress
        // The input that plays (the first before any decision).
        let playing = station.configuration.inputs.first { $0.name == state.playingInput }
        upstreamURL = playing?.shown ?? Redaction.text(station.configuration.upstream)
        upstream = state.upstream
        lastError = state.lastError
        title = state.title
        format = state.format.map(FormatStatus.init)
        bytesIn = state.bytesIn
        packets = state.packets
        decodedPackets = state.decodedPackets
        readers = state.readers
        encoders = state.encoders
        reconnects = state.reconnects
        decodeErrors = state.decodeErrors
        silenceSeconds = state.silenceSeconds
        droppedSeconds = state.droppedSeconds
        pausedSeconds = state.pausedSeconds
        encodedSeconds = state.encodedSeconds
        limiter = state.limiter
        self.alive = alive
        pushes = station.pushStatuses
        inputs = state.inputs
        playingInput = state.playingInput
        forcedInput = state.forcedInput
        switches = state.switches
        switchCounts = state.switchCounts
        history = station.history.snapshot.entries.reversed().map(HistoryStatus.init)
        uptime = max(0, wallClockNow() - station.createdAt)
        let shifts = station.outputs.map { ($0.name, $0.broadcaster.timeShift.snapshot?.counters) }
        let mainShift = shifts.first { $0.0 == nil }?.1
        let mp3Shift = shifts.first { $0.0 == StationConfiguration.mp3OutputName }?.1
        archive = station.archive.map { ArchiveFigures($0, timeShift: mainShift) }
        archiveMP3 = station.mp3Archive.map { ArchiveFigures($0, timeShift: mp3Shift) }
        recordings = station.recorder.map(RecordingFigures.init)
    }

}

/// One output of a station in a `StationStatus`: the main one (`rendition` "main") or a rendition.
package struct OutputStatus: Sendable, Equatable {
    /// `main`, or the rendition's name.
    package var rendition: String
    package var mount = ""
    /// Where its raw-TCP listeners connect (`ADDRESS:PORT`).
    package var listenAddress = ""
    /// `ogg-opus`, or `mp3` for the MP3 pass-through (which has no Opus bitrate: 0).
    package var format = "ogg-opus"
    package var opusBitrate = 0
    package var channels = 2
    package var listeners = 0
    /// Of `listeners`, those that came over HTTP (the rest over raw TCP).
    package var httpListeners = 0
    package var peakListeners = 0
    package var bytesOut = 0
    package var connections = 0
    package var refusals = 0
    package var slowMoves = 0
    package var slowDrops = 0
    package var chattyDrops = 0
    /// Listeners whose stream ended at the session limit (`max_listener_duration`).
    package var sessionLimitEnds = 0
    /// Connections closed for a missing, invalid or late PROXY header (`proxy_protocol = yes`).
    package var proxyRejected = 0
    package var pagesPublished = 0
    /// Wake-ups of its network loop so far.
    package var loopWakeups = 0
    /// Its HLS stream's figures; nil without one (`hls = no`).
    package var hls: HLSStatus?
    /// The most listeners at once over the last hour, the seconds listened (sessions going on included), and the
    /// sessions that ended by length (`ListenerStatistics.sessionBounds`, then longer).
    package var peakListenersHour = 0
    package var listeningSeconds = 0.0
    package var sessionBuckets = [Int](repeating: 0, count: ListenerStatistics.sessionBounds.count + 1)
    package var endedSessionSeconds = 0.0

    package init(rendition: String) { self.rendition = rendition }

    init(_ output: StationOutput) {
        self.init(rendition: output.label)
        let counters = output.broadcaster.counters.snapshot
        mount = output.mount
        listenAddress = output.broadcaster.shownAddress
        let mp3 = output.format == .mp3
        format = mp3 ? "mp3" : "ogg-opus"
        opusBitrate = mp3 ? 0 : output.encoder.bitrate
        channels = output.encoder.channels
        listeners = counters.listeners
        httpListeners = counters.httpListeners
        peakListeners = max(counters.peakListeners, counters.listeners)
        bytesOut = counters.bytesSent
        connections = counters.connections
        refusals = counters.rejected
        slowMoves = counters.moved
        slowDrops = counters.droppedSlow
        chattyDrops = counters.droppedChatty
        sessionLimitEnds = counters.sessionsEnded
        proxyRejected = counters.proxyRejected
        pagesPublished = counters.pagesPublished
        loopWakeups = output.broadcaster.counters.loop.wakeups.load(ordering: .relaxed)
        hls = output.hls.map(HLSStatus.init)
        let now = monotonicNow()
        let statistics = output.broadcaster.statistics.snapshot
        peakListenersHour = statistics.peakLastHour(now: now)
        listeningSeconds = statistics.listeningSeconds(now: now)
        sessionBuckets = statistics.buckets
        endedSessionSeconds = statistics.endedSeconds
    }
}
