import Glibc
import RadioRelaySystem
import Synchronization

/// The hand-over from the pipeline thread to a thread that writes files (the archive's, the recordings'): a bounded
/// queue behind a lock and an eventfd that wakes the writer. `enqueue` is an array append and never waits; when the
/// queue holds `maxItems` items or `maxBytes` bytes, what comes is dropped and counted, and the writer is told of the
/// gap (the item `gap` makes) before the next item it gets. The writer's thread (`start`) is not among the station's
/// heartbeats: a disk that hangs a `write` must not make the watchdog end the server.
///
/// A disk that hangs is told instead: the writer's round (from the items it took to its next wait) is timed, and a
/// round that passes `stallAfter` seconds is logged once by the thread that queues (the writer's own is stuck in
/// the call), then once more by the writer when the disk answers, with how long it took (`StallWatch`).
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
    /// When the writer's current round began (monotonic milliseconds); 0 while it waits for items.
    private let roundBegan = Atomic<Int64>(0)
    /// Whether the log told of the current round's stall (so that it is told once, and its end too).
    private let stallTold = Atomic<Bool>(false)
    /// What its log lines begin with ("main: archive").
    let prefix: String
    /// Seconds a round may take before it counts as a stall (`StallWatch.stallAfter`; shorter in tests).
    let stallAfter: Double

    init(
        maxItems: Int, maxBytes: Int, prefix: String, stallAfter: Double = StallWatch.stallAfter,
        gap: @escaping @Sendable (Int) -> Item
    ) throws {
        self.prefix = prefix
        self.stallAfter = stallAfter
        self.maxItems = maxItems
        self.maxBytes = maxBytes
        self.gap = gap
        wake = try EventFD()
    }

    /// Queues `items` (`bytes` in all); false when they were dropped.
    func enqueue(_ items: [Item], bytes: Int) -> Bool {
        let now = monotonicNow()
        if stalledSeconds(now: now) != nil,
            stallTold.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        {
            Log.write(
                .warning,
                "\(prefix): the disk has not answered for \(StallWatch.shown(stallAfter)) s (a write, sync or removal "
                    + "hangs): what comes waits in the queue (\(maxItems) items, \(maxBytes >> 20) MiB), then is "
                    + "dropped and counted")
        }
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

    /// Whether the log told of the current round's stall, and not yet of its end.
    var isStallTold: Bool { stallTold.load(ordering: .relaxed) }

    /// Seconds the writer's current round has taken so far (0 while it waits): a disk that hangs makes it grow.
    func roundSeconds(now: Double = monotonicNow()) -> Double {
        StallWatch.seconds(roundBegan: roundBegan.load(ordering: .relaxed), now: now)
    }

    /// The current round's seconds when it has passed `stallAfter` (a disk that hangs); nil otherwise.
    func stalledSeconds(now: Double = monotonicNow()) -> Double? {
        let round = roundSeconds(now: now)
        return round >= stallAfter ? round : nil
    }

    /// Waits up to `milliseconds` for the pipeline's next items (the writer thread's poll), and clears the signal.
    /// Its round ends here, and the next begins when it returns.
    func wait(milliseconds: Int32) {
        let took = roundSeconds()
        roundBegan.store(0, ordering: .relaxed)
        if stallTold.exchange(false, ordering: .relaxed) {
            Log.write(.notice, "\(prefix): the disk answered again after \(StallWatch.shown(took)) s")
        }
        var wait = pollfd(fd: wake.rawValue, events: Int16(POLLIN), revents: 0)
        _ = poll(&wait, 1, milliseconds)
        _ = try? wake.drain()
        roundBegan.store(StallWatch.millis(monotonicNow()), ordering: .relaxed)
    }
}

/// How long a disk writer's round has taken, from when it began: pure functions of (virtual) time.
enum StallWatch {
    /// Seconds a writer's round may take before the log tells of a disk that hangs.
    static let stallAfter = 10.0

    /// Monotonic seconds as whole milliseconds, never 0 (0 means "waiting").
    static func millis(_ seconds: Double) -> Int64 { max(1, Int64(seconds * 1000)) }

    static func seconds(roundBegan: Int64, now: Double) -> Double {
        roundBegan > 0 ? max(0, Double(millis(now) - roundBegan) / 1000) : 0
    }

    /// Seconds as the log shows them: one decimal.
    static func shown(_ seconds: Double) -> String {
        let tenths = Int(min(max(0, seconds), 1e9) * 10 + 0.5)
        return "\(tenths / 10).\(tenths % 10)"
    }
}
