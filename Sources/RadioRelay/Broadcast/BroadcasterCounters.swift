import Synchronization

/// What the Broadcaster counts, readable from any thread (status, metrics, sd_notify STATUS, tests).
package final class BroadcasterCounters: Sendable {
    package let listeners = Atomic<Int>(0)
    package let connections = Atomic<Int>(0)
    /// Closed at once: over `maxListeners` or `maxPerIP`.
    package let rejected = Atomic<Int>(0)
    /// Moved to the live edge after falling `maxLag` behind.
    package let moved = Atomic<Int>(0)
    /// Disconnected for falling behind again after being moved.
    package let droppedSlow = Atomic<Int>(0)
    /// Disconnected for sending more than `readCap` bytes.
    package let droppedChatty = Atomic<Int>(0)
    package let bytesSent = Atomic<Int>(0)
    package let pagesPublished = Atomic<Int>(0)

    package init() {}

    package struct Snapshot: Sendable, Equatable {
        package var listeners, connections, rejected, moved, droppedSlow, droppedChatty, bytesSent, pagesPublished: Int
    }

    package var snapshot: Snapshot {
        Snapshot(
            listeners: listeners.load(ordering: .relaxed), connections: connections.load(ordering: .relaxed),
            rejected: rejected.load(ordering: .relaxed), moved: moved.load(ordering: .relaxed),
            droppedSlow: droppedSlow.load(ordering: .relaxed),
            droppedChatty: droppedChatty.load(ordering: .relaxed),
            bytesSent: bytesSent.load(ordering: .relaxed), pagesPublished: pagesPublished.load(ordering: .relaxed))
    }
}
