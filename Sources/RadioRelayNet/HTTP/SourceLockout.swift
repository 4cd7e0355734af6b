import RadioRelaySystem

/// Slows password guessing, as a value on virtual time (tests: `SourceLockoutTests`). The rule is kept per pair of
/// what is guessed at (`Key.scope`: a station's source password, a DJ account at a station — `SourceGate.accountKey`
/// — or the admin's credentials) and an address (`HostKey`: an IPv4 address or an IPv6 /64): a pair with `limit` wrong
/// credentials within `window` seconds is answered 429 until the oldest of them is older than that, even with the
/// right password. Another station's failures never refuse this one, so guesses at one station from behind a DJ's
/// NAT or /64 cannot keep a DJ of another station off the air. A request without credentials (libshout's first,
/// which learns the challenge) is no failure. Bounded: at most `maxAddresses` pairs are remembered; beyond, the one
/// whose last failure is oldest is forgotten.
package struct SourceLockout: Sendable, Equatable {
    package static let limit = 10
    package static let window = 60.0
    package static let maxAddresses = 4096

    /// What the failures are counted against: a scope (`station NAME`) and an address.
    package struct Key: Hashable, Sendable {
        package var scope: String
        package var host: HostKey

        package init(scope: String, host: HostKey) {
            self.scope = scope
            self.host = host
        }

        /// A station's source password, guessed from `host`.
        package static func source(_ station: String, _ host: HostKey) -> Key {
            Key(scope: "station \(station)", host: host)
        }
    }

    /// Each pair's failures within the window, oldest first (at most `limit`).
    private var failures: [Key: [Double]] = [:]

    package init() {}

    package var addresses: Int { failures.count }

    /// Failures of the pair `host` within the window at `now`.
    package func count(_ host: Key, now: Double) -> Int {
        failures[host]?.filter { now - $0 < Self.window }.count ?? 0
    }

    /// Whether `host` is refused at `now`, and for how many seconds more.
    package func lockedOut(_ host: Key, now: Double) -> Double? {
        guard let times = failures[host], times.count >= Self.limit, let oldest = times.first,
            now - oldest < Self.window
        else { return nil }
        return Self.window - (now - oldest)
    }

    /// `host` sent wrong credentials at `now`; returns its failures within the window.
    @discardableResult
    package mutating func failed(_ host: Key, now: Double) -> Int {
        var times = (failures[host] ?? []).filter { now - $0 < Self.window }
        times.append(now)
        if times.count > Self.limit { times.removeFirst(times.count - Self.limit) }
        if failures[host] == nil && failures.count >= Self.maxAddresses { forgetOne(now: now) }
        failures[host] = times
        return times.count
    }

    private mutating func forgetOne(now: Double) {
        let expired = failures.filter { now - ($0.value.last ?? 0) >= Self.window }.map(\.key)
        if !expired.isEmpty {
            for key in expired { failures[key] = nil }
            return
        }
        if let stalest = failures.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) })?.key {
            failures[stalest] = nil
        }
    }
}
