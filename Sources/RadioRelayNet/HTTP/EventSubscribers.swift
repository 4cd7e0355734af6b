import RadioRelayMedia
import RadioRelaySystem

/// Who may subscribe to title events (`/NAME/events`), as a pure value (tests: `EventSubscriberTests`).
///
/// A subscriber holds a descriptor as long as it likes and is written a few bytes every 15 s, so the rules that keep
/// audio listeners in check (a socket that stays full) never see an idle one. Its own limits do:
///
/// - **per address, across every mount**: at most `perAddress` (64 by default, as the front end's unfinished
///   requests; fewer when the station's `max_per_ip` is set and smaller), so a cap cannot be multiplied by opening
///   subscriptions to several mounts;
/// - **per station output**: listeners and subscribers together within its `max_listeners`;
/// - **in all**: at most `share` of the server's listener places (a quarter), so subscribers can never take the
///   descriptors audio listeners need.
package struct EventSubscribers: Sendable, Equatable {
    /// Subscriptions from one address at most (0: no cap of its own).
    package var perAddress: Int
    /// The fraction of the listener budget subscribers may hold together.
    package var share: Double

    package private(set) var total = 0
    package private(set) var perMount: [String: Int] = [:]
    package private(set) var perHost: [HostKey: Int] = [:]

    package init(perAddress: Int = 64, share: Double = 0.25) {
        self.perAddress = max(0, perAddress)
        self.share = share.isFinite ? min(1, max(0, share)) : 0.25
    }

    /// Subscribers allowed in all under a listener budget of `budgetLimit` places (`Int.max`: none set).
    package func ceiling(budgetLimit: Int) -> Int {
        guard budgetLimit < Int.max else { return Int.max }
        return max(1, Int((Double(max(0, budgetLimit)) * share).rounded(.down)))
    }

    /// Why one more subscriber to `mount` would pass its station output's `maxListeners` (0: none) with the output's
    /// `listeners`, or nil.
    package func stationRefusal(mount: String, listeners: Int, maxListeners: Int) -> String? {
        let onMount = perMount[mount, default: 0]
        let (sum, overflow) = max(0, listeners).addingReportingOverflow(onMount)
        guard maxListeners > 0 && (overflow || sum >= maxListeners) else { return nil }
        return "station full (\(maxListeners) listeners and subscribers)"
    }

    /// Why one more subscriber from `host` would pass its address's cap (`perAddress`, or the output's `maxPerIP`
    /// when smaller; 0: none), or nil.
    package func addressRefusal(host: HostKey, maxPerIP: Int) -> String? {
        let caps = [perAddress, maxPerIP].filter { $0 > 0 }
        guard let cap = caps.min(), perHost[host, default: 0] >= cap else { return nil }
        return "too many event streams from one address (\(cap))"
    }

    /// Why one more subscriber would pass the subscribers' share of `budgetLimit` places, or nil.
    package func shareRefusal(budgetLimit: Int) -> String? {
        let ceiling = ceiling(budgetLimit: budgetLimit)
        guard total >= ceiling else { return nil }
        return "too many event streams (\(ceiling): a quarter of the server's listener places)"
    }

    /// Why one more subscriber from `host` to `mount` is refused, or nil when it may subscribe: the three above, in
    /// the admission point's order.
    /// - Parameters:
    ///   - listeners: the output's listeners now; `maxListeners` its limit (0: none); `maxPerIP` its per-address
    ///     limit (0: none); `budgetLimit` the server's listener places.
    package func refusal(
        mount: String, host: HostKey, listeners: Int, maxListeners: Int, maxPerIP: Int, budgetLimit: Int
    ) -> String? {
        stationRefusal(mount: mount, listeners: listeners, maxListeners: maxListeners)
            ?? addressRefusal(host: host, maxPerIP: maxPerIP) ?? shareRefusal(budgetLimit: budgetLimit)
    }

    package mutating func add(mount: String, host: HostKey) {
        total += 1
        perMount[mount, default: 0] += 1
        perHost[host, default: 0] += 1
    }

    package mutating func remove(mount: String, host: HostKey) {
        total = max(0, total - 1)
        let onMount = perMount[mount, default: 1] - 1
        perMount[mount] = onMount > 0 ? onMount : nil
        let fromHost = perHost[host, default: 1] - 1
        perHost[host] = fromHost > 0 ? fromHost : nil
    }

    package var isEmpty: Bool { total == 0 }
}
