import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// `/status.json` is `StatusSnapshot` encoded (`StatusReport.json`), and `radio-relay status` decodes the same type:
/// every key is written once, in a `CodingKeys` here or in `StatusSchema+Station.swift`, so a renamed field breaks
/// the build of whatever reads it, never its meaning. Figures a report derives (sums over outputs, `healthy`) are
/// written and not read back; seconds are written to the millisecond; an absent value is `null`.
extension StatusSnapshot: Codable {
    enum CodingKeys: String, CodingKey {
        case version
        case uptime = "uptime_seconds"
        case budget = "listener_budget"
        case healthy, stations, loops
        case listenersTotal = "listeners_total"
        case listeners
        case refusals = "listener_refusals"
        case redirects = "listener_redirects"
        case authentication
    }

    package func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encode(version, forKey: .version)
        try out.encodeSeconds(uptime, forKey: .uptime)
        try out.encodeOrNull(budget, forKey: .budget)
        try out.encode(isHealthy, forKey: .healthy)
        try out.encode(stations, forKey: .stations)
        try out.encode(loops, forKey: .loops)
        try out.encode(listenersTotal, forKey: .listenersTotal)
        try out.encode(listeners, forKey: .listeners)
        try out.encode(refusals, forKey: .refusals)
        try out.encode(redirects, forKey: .redirects)
        try out.encode(authentication, forKey: .authentication)
    }

    package init(from decoder: any Swift.Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            version: try values.decode(String.self, forKey: .version),
            uptime: try values.decodeIfPresent(Double.self, forKey: .uptime) ?? 0,
            stations: try values.decode([StationStatus].self, forKey: .stations))
        budget = try values.decodeIfPresent(BudgetStatus.self, forKey: .budget)
        loops = try values.decodeIfPresent([LoopStatus].self, forKey: .loops) ?? []
        listenersTotal = try values.decodeIfPresent(Int.self, forKey: .listenersTotal) ?? 0
        listeners = try values.decodeIfPresent([ListenerStatus].self, forKey: .listeners) ?? []
        refusals = try values.decodeIfPresent([RefusalStatus].self, forKey: .refusals) ?? []
        redirects = try values.decodeIfPresent(Int.self, forKey: .redirects) ?? 0
        authentication =
            try values.decodeIfPresent(AuthenticationStatus.self, forKey: .authentication) ?? AuthenticationStatus()
    }
}

/// The protected stations' backend calls since start (`AuthCounters`, read once).
package struct AuthenticationStatus: Sendable, Equatable, Codable {
    /// Add calls and htpasswd checks by outcome.
    package var admitted = 0
    package var refused = 0
    /// The backend could not answer in time, or answered 5xx or garbage.
    package var failed = 0
    /// Listeners not even asked about: too many waiting.
    package var overCap = 0
    /// Listeners waiting for a verdict now.
    package var waiting = 0
    package var removesSent = 0
    package var removesFailed = 0
    /// Removes dropped: too many queued, or the stop's drain over.
    package var removesUnsent = 0

    enum CodingKeys: String, CodingKey {
        case admitted, refused, failed, waiting
        case overCap = "over_cap"
        case removesSent = "removes_sent"
        case removesFailed = "removes_failed"
        case removesUnsent = "removes_unsent"
    }

    package init() {}

    package init(_ counters: AuthCounters) {
        admitted = counters.admitted.load(ordering: .relaxed)
        refused = counters.refused.load(ordering: .relaxed)
        failed = counters.failed.load(ordering: .relaxed)
        overCap = counters.overCap.load(ordering: .relaxed)
        waiting = counters.waiting.load(ordering: .relaxed)
        removesSent = counters.removesSent.load(ordering: .relaxed)
        removesFailed = counters.removesFailed.load(ordering: .relaxed)
        removesUnsent = counters.removesUnsent.load(ordering: .relaxed)
    }
}

/// One of the server's own loops (the HTTP front end, the status endpoint) and its wake-ups so far.
package struct LoopStatus: Sendable, Equatable, Codable {
    package var name: String
    package var wakeups: Int
}

/// Listeners refused since start for one reason.
package struct RefusalStatus: Sendable, Equatable, Codable {
    package var reason: AdmissionRefusal
    package var count: Int
}

/// The listener places taken and allowed across all stations (the descriptor budget).
package struct BudgetStatus: Sendable, Equatable, Codable {
    package var used: Int
    package var limit: Int
}

/// One admitted listener (`ListenerEntry`, read once).
package struct ListenerStatus: Sendable, Equatable, Codable {
    package var id: ListenerID
    package var kind: ListenerProtocol
    package var station: String
    package var mount: String
    package var address: String
    package var userAgent: String?
    /// Whole seconds since it was admitted.
    package var seconds: Int
    package var bytes: Int

    enum CodingKeys: String, CodingKey {
        case id, kind, station, mount, address
        case userAgent = "user_agent"
        case seconds, bytes
    }

    package init(_ entry: ListenerEntry, now: Double) {
        id = entry.id
        kind = entry.kind
        station = entry.station
        mount = entry.mount
        address = entry.address
        userAgent = entry.userAgent
        let seconds = now - entry.connectedAt
        self.seconds = seconds.isFinite ? Int(min(max(0, seconds), 1e12)) : 0
        bytes = entry.bytes.load(ordering: .relaxed)
    }

    package func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encode(id, forKey: .id)
        try out.encode(kind, forKey: .kind)
        try out.encode(station, forKey: .station)
        try out.encode(mount, forKey: .mount)
        try out.encode(address, forKey: .address)
        try out.encodeOrNull(userAgent, forKey: .userAgent)
        try out.encode(seconds, forKey: .seconds)
        try out.encode(bytes, forKey: .bytes)
    }
}

extension ListenerID: Codable {
    package init(from decoder: any Swift.Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(UInt64.self))
    }

    package func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.singleValueContainer()
        try out.encode(value)
    }
}

/// An output's HLS stream: segments made and held, the answers given from it, and its players.
package struct HLSStatus: Sendable, Equatable, Codable {
    package var segments = 0
    package var heldBytes = 0
    package var answered = 0
    package var notFound = 0
    /// Sessions with an answer within the last 30 s (`HLSSessions`).
    package var players = 0

    enum CodingKeys: String, CodingKey {
        case segments
        case heldBytes = "held_bytes"
        case answered = "answers"
        case notFound = "not_found"
        case players
    }

    package init() {}

    init(_ stream: HLSStream) {
        segments = stream.statistics.segments
        heldBytes = stream.heldBytes
        answered = stream.answered.load(ordering: .relaxed)
        notFound = stream.notFound.load(ordering: .relaxed)
        players = stream.playerCount()
    }
}

/// The input's audio as status shows it.
package struct FormatStatus: Sendable, Equatable, Codable {
    package var layer: Int
    package var sampleRate: Int
    package var channels: Int
    package var bitrate: Int
    package var description: String

    enum CodingKeys: String, CodingKey {
        case layer
        case sampleRate = "sample_rate"
        case channels, bitrate, description
    }

    package init(_ format: DataFormat) {
        layer = format.layer
        sampleRate = format.sampleRate
        channels = format.channels
        bitrate = format.bitrate
        description = format.description
    }
}

/// A title in a station's history: when it started, in UTC (`2026-12-04T18:00:00.000Z`), its input, and the DJ whose
/// set it was in (only then).
package struct HistoryStatus: Sendable, Equatable, Codable {
    package var title: String
    package var started: String
    package var input: String
    package var dj: String?

    package init(_ entry: SongHistory.Entry) {
        title = entry.title
        started = UTCTime(entry.started).iso8601
        input = entry.input
        dj = entry.dj
    }
}

extension KeyedEncodingContainer {
    /// Seconds to the millisecond; `null` when not finite (JSON has no infinity or NaN).
    mutating func encodeSeconds(_ value: Double, forKey key: Key) throws {
        guard value.isFinite else { return try encodeNil(forKey: key) }
        try encode((value * 1000).rounded() / 1000, forKey: key)
    }

    /// The value, or `null` (rather than no key at all).
    mutating func encodeOrNull<Value: Encodable>(_ value: Value?, forKey key: Key) throws {
        guard let value else { return try encodeNil(forKey: key) }
        try encode(value, forKey: key)
    }
}
