import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// What the Broadcaster counts, readable from any thread (status, metrics, sd_notify STATUS, tests).
package final class BroadcasterCounters: Sendable {
    /// Listeners connected now, and the most there have been at once (`peak`).
    package let listeners = ListenerGauge()
    /// Of `listeners`, those that came in over HTTP (the rest are raw TCP).
    package let httpListeners = Atomic<Int>(0)
    package let connections = Atomic<Int>(0)
    /// Closed at once: over `maxListeners` or `maxPerIP`.
    package let rejected = Atomic<Int>(0)
    /// Moved to the live edge after falling `maxLag` behind.
    package let moved = Atomic<Int>(0)
    /// Disconnected for falling behind again after being moved.
    package let droppedSlow = Atomic<Int>(0)
    /// Ended at their session limit (`max_listener_duration`).
    package let sessionsEnded = Atomic<Int>(0)
    /// Disconnected for sending more than `readCap` bytes.
    package let droppedChatty = Atomic<Int>(0)
    /// Closed for a missing, invalid or late PROXY header (`proxyProtocol`), or with too many waiting for theirs.
    package let proxyRejected = Atomic<Int>(0)
    package let bytesSent = Atomic<Int>(0)
    package let pagesPublished = Atomic<Int>(0)
    /// The network loop's wake-ups.
    package let loop = LoopActivity()

    package init() {}

    package struct Snapshot: Sendable, Equatable {
        package var listeners, connections, rejected, moved, droppedSlow, droppedChatty, bytesSent, pagesPublished: Int
        package var peakListeners = 0
        package var httpListeners = 0
        package var proxyRejected = 0
        package var sessionsEnded = 0
    }

    package var snapshot: Snapshot {
        Snapshot(
            listeners: listeners.load(ordering: .relaxed), connections: connections.load(ordering: .relaxed),
            rejected: rejected.load(ordering: .relaxed), moved: moved.load(ordering: .relaxed),
            droppedSlow: droppedSlow.load(ordering: .relaxed),
            droppedChatty: droppedChatty.load(ordering: .relaxed),
            bytesSent: bytesSent.load(ordering: .relaxed), pagesPublished: pagesPublished.load(ordering: .relaxed),
            peakListeners: listeners.peak, httpListeners: httpListeners.load(ordering: .relaxed),
            proxyRejected: proxyRejected.load(ordering: .relaxed), sessionsEnded: sessionsEnded.load(ordering: .relaxed)
        )
    }
}

/// The listener count, as the network loop stores it, with the highest value ever stored beside it (for the
/// status endpoint's "peak listeners"). Same `store`/`load` calls as the `Atomic<Int>` it replaces; both are
/// relaxed, like every counter here (the ordering argument is taken for that likeness: atomics need a constant).
package final class ListenerGauge: Sendable {
    private let current = Atomic<Int>(0)
    private let highest = Atomic<Int>(0)

    package init() {}

    package func store(_ value: Int, ordering: AtomicStoreOrdering) {
        current.store(value, ordering: .relaxed)
        highest.max(value, ordering: .relaxed)
    }

    package func load(ordering: AtomicLoadOrdering) -> Int { current.load(ordering: .relaxed) }

    /// Takes a place for one more listener unless `limit` (> 0) are there already: the pool's loops admit
    /// listeners of one station at once, and the limit holds across them exactly.
    package func reserve(limit: Int) -> Bool {
        var count = current.load(ordering: .relaxed)
        while true {
            if limit > 0 && count >= limit { return false }
            let (exchanged, original) = current.compareExchange(
                expected: count, desired: count &+ 1, ordering: .relaxed)
            if exchanged {
                highest.max(count &+ 1, ordering: .relaxed)
                return true
            }
            count = original
        }
    }

    /// Gives a place back (a listener left).
    package func release() {
        current.subtract(1, ordering: .relaxed)
    }

    /// The most listeners there have been at once since the Broadcaster was made.
    package var peak: Int { highest.load(ordering: .relaxed) }
}

/// A station's listeners across its outputs — raw TCP, HTTP, HLS sessions — and the station's `max_listeners`
/// (its main output's setting, set again by a reload): one for all its outputs (`Broadcaster.audience`). An output's
/// own `max_listeners` (a rendition's section may set one) caps its own count besides.
package final class StationAudience: Sendable {
    package let listeners = ListenerGauge()
    /// 0: no limit.
    package let limit: Atomic<Int>

    package init(limit: Int = 0) { self.limit = Atomic(max(0, limit)) }

    /// Takes a place unless the station is full.
    package func reserve() -> Bool { listeners.reserve(limit: limit.load(ordering: .relaxed)) }

    package func release() { listeners.release() }

    package var count: Int { listeners.load(ordering: .relaxed) }
}
