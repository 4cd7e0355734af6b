import Glibc
import RadioRelaySystem

/// The hand-over from the pipeline thread to a thread that writes files (the archive's, the recordings'): a bounded
/// queue behind a lock and an eventfd that wakes the writer. `enqueue` is an array append and never waits; when the
/// queue holds `maxItems` items or `maxBytes` bytes, what comes is dropped and counted, and the writer is told of the
/// gap (the item `gap` makes) before the next item it gets. The writer's thread (`start`) is not among the station's
/// heartbeats: a disk that hangs a `write` must not make the watchdog end the server.
final class DiskQueue<Item>: Sendable {
    private struct Queue {
        var items: [Item] = []
        var bytes = 0
        /// Items dropped since the last one queued.
        var dropped = 0
    }

    let maxItems: Int
    let maxBytes: Int
    let wake: EventFD
    private let gap: @Sendable (Int) -> Item
    private let queue = LockedBox(Queue())
    private let thread = LockedBox<ServiceThread?>(nil)

    init(maxItems: Int, maxBytes: Int, gap: @escaping @Sendable (Int) -> Item) throws {
        self.maxItems = maxItems
        self.maxBytes = maxBytes
        self.gap = gap
        wake = try EventFD()
    }

    /// Queues `items` (`bytes` in all); false when they were dropped.
    func enqueue(_ items: [Item], bytes: Int) -> Bool {
        let (accepted, wasEmpty) = queue.withLock { q -> (Bool, Bool) in
            guard q.items.count + items.count <= maxItems, q.bytes + bytes <= maxBytes else {
                q.dropped += items.count
                return (false, false)
            }
            let wasEmpty = q.items.isEmpty
            if q.dropped > 0 {
                q.items.append(gap(q.dropped))
                q.dropped = 0
            }
            q.items += items
            q.bytes += bytes
            return (true, wasEmpty)
        }
        if wasEmpty { try? wake.signal() }
        return accepted
    }

    /// Items waiting for the writer.
    var count: Int { queue.withLock { $0.items.count } }

    /// Everything queued, for the writer thread.
    func take() -> [Item] {
        queue.withLock { q in
            defer {
                q.items = []
                q.bytes = 0
            }
            return q.items
        }
    }

    /// Starts the writer's thread, `name`, running `body`.
    func start(name: String, _ body: @escaping @Sendable (ServiceThread) -> Void) throws {
        let made = ServiceThread(name: name, body: body)
        try made.start()
        thread.withLock { $0 = made }
    }

    /// Stops the thread (its body writes what is queued); false when it did not end within `timeout` (a hung disk:
    /// it is left to end by itself).
    func stop(timeout: Double) -> Bool {
        guard let running = thread.take() else { return true }
        running.requestStop()
        try? wake.signal()
        return running.stop(timeout: timeout)
    }

    /// Waits up to `milliseconds` for the pipeline's next items (the writer thread's poll), and clears the signal.
    func wait(milliseconds: Int32) {
        var wait = pollfd(fd: wake.rawValue, events: Int16(POLLIN), revents: 0)
        _ = poll(&wait, 1, milliseconds)
        _ = try? wake.drain()
    }
}
