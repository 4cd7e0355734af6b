import RadioRelaySystem

/// The HLS players of one stream, counted as the distinct addresses (`HostKey`: an IPv4 address, an IPv6 /64) that
/// fetched its playlist or a segment within the last `window` seconds: an HLS player holds no connection, so this is
/// how many listen. Behind a balancer without the PROXY protocol every player is the balancer's one address. A pure
/// value on virtual time (tests: `HLSPlayersTests`); bounded: at most `maxAddresses` are kept; when full, the
/// expired ones are dropped at most once a second and a new address beyond the bound is not counted (a flood of
/// addresses can neither grow it nor make each request scan it).
package struct HLSPlayers: Sendable, Equatable {
    /// A player reloads its playlist every segment (2 s by default) and at most every target duration (10 s).
    package static let window = 30.0
    package static let maxAddresses = 65_536

    private var lastSeen: [HostKey: Double] = [:]
    private var lastPrune = -Double.infinity

    package init() {}

    package mutating func saw(_ address: HostKey, now: Double) {
        if lastSeen[address] == nil && lastSeen.count >= Self.maxAddresses {
            if now - lastPrune >= 1 {
                lastPrune = now
                lastSeen = lastSeen.filter { now - $0.value < Self.window }
            }
            guard lastSeen.count < Self.maxAddresses else { return }
        }
        lastSeen[address] = now
    }

    /// Players seen within the window before `now`.
    package func count(now: Double) -> Int { lastSeen.values.reduce(0) { $0 + (now - $1 < Self.window ? 1 : 0) } }

    package var addresses: Int { lastSeen.count }
}
