import RadioRelaySystem
import Synchronization

/// The HLS players of one stream as sessions: an HLS player holds no connection, so a session is known by its
/// address (`HostKey`: an IPv4 address, an IPv6 /64) and its user agent — the URLs stay the same for everyone, so
/// that HTTP caches and CDNs keep serving them — and it ends `window` seconds after its last answer. Each has a
/// `ListenerID` (the admission point's, given at its first answer); the HTTP front end writes its access-log line
/// when it ends. Behind a balancer without the PROXY protocol every player is the balancer's one address: players
/// are then told apart by user agent only.
///
/// A pure value on virtual time (tests: `HLSSessionsTests`); bounded: at most `maxSessions` are kept; when full, the
/// ended ones are dropped at most once a second and a new session beyond the bound is not kept (a flood of
/// addresses or user agents can neither grow it nor make each request scan it).
package struct HLSSessions: Sendable {
    /// A player reloads its playlist every segment (2 s by default) and at most every target duration (10 s).
    package static let window = 30.0
    package static let maxSessions = 65_536
    /// The user agent's characters that tell sessions apart, at most.
    package static let agentLimit = 256

    package struct Key: Hashable, Sendable {
        package var host: HostKey
        package var agent: String

        package init(host: HostKey, agent: String?) {
            self.host = host
            self.agent = String((agent ?? "").unicodeScalars.prefix(HLSSessions.agentLimit))
        }
    }

    package struct Session: Sendable {
        package var entry: ListenerEntry
        /// Its first request, for its access-log line.
        package var request: ListenerRequest
        package var lastSeen: Double
        /// When it came to this stream (its first answer, or a move): its access-log line's seconds count from it.
        package var arrived: Double
    }

    private var sessions: [Key: Session] = [:]
    private var lastSweep = -Double.infinity

    package init() {}

    /// The session `key` is in at `now`, noting an answer of `bytes` to it; nil when it has none (or it ended).
    package mutating func answered(_ key: Key, bytes: Int, now: Double) -> ListenerEntry? {
        guard var session = sessions[key], now - session.lastSeen < Self.window else { return nil }
        session.lastSeen = now
        session.entry.bytes.add(max(0, bytes), ordering: .relaxed)
        sessions[key] = session
        return session.entry
    }

    /// Starts `key`'s session with the admission's `entry` and its first answer of `bytes`; returns the session it
    /// replaces (ended: its key came back after the window), and false when the bound leaves no room (the session is
    /// not kept: the caller lets its entry go).
    package mutating func begin(
        _ key: Key, entry: ListenerEntry, request: ListenerRequest, bytes: Int, now: Double
    ) -> (kept: Bool, ended: Session?) {
        let ended = sessions[key]
        if ended == nil && sessions.count >= Self.maxSessions { return (false, nil) }
        entry.bytes.add(max(0, bytes), ordering: .relaxed)
        sessions[key] = Session(entry: entry, request: request, lastSeen: now, arrived: now)
        return (true, ended)
    }

    /// The sessions whose window ended by `now`, taken out (looked for at most once a second, unless `all`).
    package mutating func end(now: Double, all: Bool = false) -> [Session] {
        guard all || now - lastSweep >= 1 else { return [] }
        lastSweep = now
        var ended: [Session] = []
        for (key, session) in sessions where all || !(now - session.lastSeen < Self.window) {
            ended.append(session)
            sessions[key] = nil
        }
        return ended
    }

    /// The session of listener `id`, taken out (an admin's kick; one scan).
    package mutating func end(id: ListenerID) -> Session? {
        guard let (key, session) = sessions.first(where: { $0.value.entry.id == id }) else { return nil }
        sessions[key] = nil
        return session
    }

    /// The live sessions (all, or listener `id`'s), taken out with their keys (an admin's move; one scan).
    package mutating func take(id: ListenerID?, now: Double) -> [(key: Key, session: Session)] {
        let taken = sessions.filter { key, session in
            now - session.lastSeen < Self.window && (id == nil || session.entry.id == id)
        }
        for key in taken.keys { sessions[key] = nil }
        return taken.map { ($0.key, $0.value) }
    }

    /// Puts back a session `take` took (its move was refused).
    package mutating func restore(_ key: Key, _ session: Session) {
        if sessions[key] == nil { sessions[key] = session }
    }

    /// Sessions whose last answer is within the window before `now`.
    package func count(now: Double) -> Int {
        sessions.values.reduce(0) { $0 + (now - $1.lastSeen < Self.window ? 1 : 0) }
    }

    /// Sessions kept (ended ones not yet taken out included).
    package var kept: Int { sessions.count }
}
