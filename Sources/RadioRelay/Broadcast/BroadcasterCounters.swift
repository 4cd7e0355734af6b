import Synchronization

/// What the Broadcaster counts, readable from any thread (status, metrics, sd_notify STATUS, tests).
public final class BroadcasterCounters: Sendable {
    public let listeners = Atomic<Int>(0)
    public let connections = Atomic<Int>(0)
    /// Closed at once: over `maxListeners` or `maxPerIP`.
    public let rejected = Atomic<Int>(0)
    /// Moved to the live edge after falling `maxLag` behind.
    public let moved = Atomic<Int>(0)
    /// Disconnected for falling behind again after being moved.
    public let droppedSlow = Atomic<Int>(0)
    /// Disconnected for sending more than `readCap` bytes.
    public let droppedChatty = Atomic<Int>(0)
    public let bytesSent = Atomic<Int>(0)
    public let pagesPublished = Atomic<Int>(0)

    public init() {}

    public struct Snapshot: Sendable, Equatable {
        public var listeners, connections, rejected, moved, droppedSlow, droppedChatty, bytesSent, pagesPublished: Int
    }

    public var snapshot: Snapshot {
        Snapshot(listeners: listeners.load(ordering: .relaxed), connections: connections.load(ordering: .relaxed),
                 rejected: rejected.load(ordering: .relaxed), moved: moved.load(ordering: .relaxed),
                 droppedSlow: droppedSlow.load(ordering: .relaxed),
                droppedChatty: droppedChatty.load(ordering: .relaxed),
                 bytesSent: bytesSent.load(ordering: .relaxed), pagesPublished: pagesPublished.load(ordering: .relaxed))
    }
}
