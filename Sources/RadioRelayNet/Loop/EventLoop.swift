import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The one event-loop skeleton of the server's network threads — the station outputs' `PoolLoop`s, the public HTTP
/// front end and the status endpoint (`HTTPConnectionLoop`): the epoll set with the listening socket and the wake
/// eventfds, accepting in bounded batches with a pause when descriptors or memory run out (`AcceptBackoff`), the
/// PROXY-header wait of a port behind balancers (`ProxyHeaderWait`), connection deadlines in a `DeadlineHeap`, the
/// heartbeat, the stop, and the rate-limited log lines. What a connection is and what it is sent is the handler's
/// decision (`EventLoopHandler`); the skeleton only carries events to it.
///
/// Work per wake-up is that wake-up's: the expired deadlines (the heap hands over only those), the events epoll
/// reports, and the handler's own; a connection that has nothing due costs nothing, however many are attached.
/// Each wake-up source is its own eventfd (for a pool loop: "pages published" and "control" — attach, detach,
/// arrivals, settings, stop), so the handler knows why it was woken without looking at anything.
package final class EventLoop {
    /// A listening socket's tag is its descriptor with this bit set (a connection's tag is its descriptor).
    static let listeningBit = UInt64(1) << 40
    /// Wake-up source `i` (0-based) carries the tag `firstWakeTag - i`.
    private static let firstWakeTag = UInt64.max - 1
    private static let maxWakeSources = 8

    /// Names the loop in its log lines (a station's name, "http", "status").
    package let label: String
    package let epoll: Epoll
    /// The listening sockets it accepts on (a station network loop of a pool: every output whose socket it was
    /// given; the HTTP and status loops: one).
    package internal(set) var listening: [Int32] = []
    /// Connections accepted per wake-up at most: a storm is admitted in batches between which the loop serves the
    /// connections it has.
    package let acceptBatch: Int
    /// The longest sleep, in milliseconds (the heartbeat's period at most).
    package let tick: Int32
    private var wakeFDs: [Int32] = []
    /// Whether the listening socket is watched, and when it is watched again after `accept4` ran out of resources.
    package internal(set) var listenWatched = true
    package internal(set) var backoff = AcceptBackoff()
    /// Deadlines of the handler's connections, by descriptor: each expired one is handed to `expired` once.
    package var deadlines = DeadlineHeap<Int32>()
    /// The stage a fresh connection passes before the handler gets it (the PROXY header of a port behind
    /// balancers, `ProxyStage`), if the loop's owner gave one.
    package var arrivals: (any ArrivalStage)?
    /// Lines that a storm could repeat: at most 10 per kind per 10 s, then a count.
    package var logLimit = LogRateLimit<LogTopic>(limit: 10, window: 10)
    package var scratch = [UInt8](repeating: 0, count: 4096)
    /// Wake-ups so far (read by metrics from other threads).
    package let activity: LoopActivity

    package init(
        label: String, listenFD: Int32?, wakeFDs: [Int32], epollCapacity: Int = Epoll.maxEvents, acceptBatch: Int,
        tick: Int32, activity: LoopActivity = LoopActivity()
    ) throws(SystemError) {
        self.label = label
        self.acceptBatch = max(1, acceptBatch)
        self.tick = max(1, tick)
        self.activity = activity
        epoll = try Epoll(capacity: epollCapacity)
        if let listenFD { try addListening(listenFD) }
        for fd in wakeFDs.prefix(Self.maxWakeSources) {
            try epoll.add(fd, events: EPOLLIN.rawValue, tag: Self.firstWakeTag - UInt64(self.wakeFDs.count))
            self.wakeFDs.append(fd)
        }
    }

    // MARK: Running

    /// Serves until `thread` is asked to stop: every iteration (at least one per `tick`) beats the heartbeat, expires
    /// what is due, sleeps until the earliest deadline or an event, and hands the events to `handler`. A failing
    /// `epoll_wait` is thrown: the loop cannot go on, and the thread's owner decides what follows.
    package func run(in thread: ServiceThread, _ handler: some EventLoopHandler) throws {
        let wakeUps = handler as? any WakeUpHandler
        while !thread.isStopping {
            thread.beat()
            let now = monotonicNow()
            if backoff.resumes(now: now) { watchListenSocket(true) }
            if let due = logLimit.nextSummary, now >= due { logSummaries(now: now) }
            if let arrivals, !arrivals.isEmpty { arrivals.expire(now: now, loop: self) }
            for fd in deadlines.popExpired(now: now) { handler.expired(fd, now: now) }
            var until = handler.prepare(now: now)
            earliest(&until, backoff.resumeAt)
            if let arrivals, !arrivals.isEmpty { earliest(&until, arrivals.nextDeadline) }
            earliest(&until, deadlines.first()?.deadline)
            let wait = Self.waitMilliseconds(until: until, now: now, cap: tick)
            let count = try epoll.wait(timeoutMilliseconds: wait)
            activity.wakeups.add(1, ordering: .relaxed)
            wakeUps?.awake()
            // Connections first, new ones last: what the connections already here sent is read before an accept
            // batch can make room by closing the oldest of them (a busy address's health check, sent with its
            // connection, is answered rather than evicted by the crowd behind it).
            var acceptable = false
            for index in 0..<count {
                let (tag, mask) = epoll.event(at: index)
                if tag & Self.listeningBit != 0 && tag < Self.firstWakeTag - UInt64(Self.maxWakeSources) {
                    acceptable = true
                } else if tag > Self.firstWakeTag - UInt64(Self.maxWakeSources) {
                    let source = Int(Self.firstWakeTag - tag)
                    drainWake(source)
                    wakeUps?.woken(source)
                } else if let fd = Int32(exactly: tag) {
                    if let arrivals, !arrivals.isEmpty, arrivals.holds(fd) {
                        arrivals.ready(fd, loop: self, handler)
                    } else {
                        handler.ready(fd, mask: mask)
                    }
                }
            }
            if acceptable {
                for index in 0..<count {
                    let (tag, _) = epoll.event(at: index)
                    if tag & Self.listeningBit != 0 && tag < Self.firstWakeTag - UInt64(Self.maxWakeSources) {
                        accept(Int32(truncatingIfNeeded: tag & 0xFFFF_FFFF), handler)
                    }
                }
            }
            wakeUps?.settle()
        }
    }

    /// How long the loop may sleep: until the earliest deadline, at most `cap` ms, rounded up so it does not wake
    /// just before it. Never converts a non-finite or out-of-range value to an integer.
    package static func waitMilliseconds(until deadline: Double?, now: Double, cap: Int32 = 500) -> Int32 {
        guard let deadline else { return cap }
        let milliseconds = ((deadline - now) * 1000).rounded(.up)
        guard milliseconds > 0 else { return 0 }  // due, long overdue (-inf), or NaN
        guard milliseconds < Double(cap) else { return cap }
        return Int32(milliseconds)
    }

    /// `until` becomes `candidate` when that is earlier (no array per iteration).
    private func earliest(_ until: inout Double?, _ candidate: Double?) {
        guard let candidate else { return }
        until = min(until ?? candidate, candidate)
    }

    private func drainWake(_ source: Int) {
        guard source < wakeFDs.count else { return }
        var value: UInt64 = 0
        let result = Glibc.read(wakeFDs[source], &value, MemoryLayout<UInt64>.size)
        if result < 0 && errno != EAGAIN && errno != EINTR {
            logLimited(
                .socketTrouble, .warning, now: monotonicNow(),
                "\(label): wake-up event: \(SystemError("read", errno: errno))")
        }
    }

    // MARK: Log lines

    /// Writes a line of a kind that can repeat, within `logLimit`: after 10 in 10 s, the rest are counted and
    /// reported in one line.
    package func logLimited(
        _ topic: LogTopic, _ priority: Log.Priority, now: Double, _ message: @autoclosure () -> String
    ) {
        guard Log.isEnabled(priority) else { return }
        switch logLimit.admit(topic, now: now) {
        case .suppress:
            return
        case .writeAfter(let suppressed):
            Log.write(priority, summary(topic, suppressed))
            Log.write(priority, message())
        case .write:
            Log.write(priority, message())
        }
    }

    /// Reports the kinds of lines whose window ended with lines left out.
    package func logSummaries(now: Double) {
        while let (topic, suppressed) = logLimit.summary(now: now) { Log.notice(summary(topic, suppressed)) }
    }

    private func summary(_ topic: LogTopic, _ suppressed: Int) -> String {
        "\(label): … \(topic.rawValue) repeated \(suppressed) more times in \(wholeSeconds(logLimit.window)) s (not logged)"
    }
}

@available(*, unavailable) extension EventLoop: Sendable {}

/// What a loop built on `EventLoop` decides. Every call comes on the loop's thread.
package protocol EventLoopHandler: AnyObject {
    /// A connection to serve, accepted on `listening`: `peer` is the client (the PROXY header's source, when the
    /// loop's arrival stage read one).
    func accepted(_ socket: consuming FileDescriptor, peer: SocketAddress, via: ArrivalPath, on listening: Int32)
    /// epoll reported `mask` for a descriptor the handler registered with its descriptor as the tag.
    func ready(_ fd: Int32, mask: UInt32)
    /// A deadline the handler set in `deadlines` passed (it is removed already).
    func expired(_ fd: Int32, now: Double)
    /// Before each sleep: what is due by the handler's own clock; returns its next deadline beyond `deadlines`.
    func prepare(now: Double) -> Double?
}

/// A handler that also wants the wake-ups themselves (a pool loop: which eventfd fired, and the moments before and
/// after a wake-up's events, to batch its work).
package protocol WakeUpHandler: EventLoopHandler {
    /// Wake-up source `source` (the index of its eventfd at `init`) fired; it is drained already.
    func woken(_ source: Int)
    /// Right after the sleep, before the wake-up's events are handed over.
    func awake()
    /// After every event of the wake-up was handed over.
    func settle()
}

/// A stage a fresh connection passes before the loop's handler gets it, given to the loop by its owner
/// (`EventLoop.arrivals`): the PROXY header of a port behind balancers (`ProxyStage`). Every call comes on the loop's
/// thread.
package protocol ArrivalStage: AnyObject {
    /// Whether a connection accepted on `listening` goes through the stage (asked for each one).
    func wants(_ listening: Int32) -> Bool
    /// Takes a connection it wants; hands it to `handler` once through (or closes it).
    func take(
        _ socket: consuming FileDescriptor, peer: SocketAddress, on listening: Int32, loop: EventLoop,
        _ handler: some EventLoopHandler)
    /// Whether `fd` is one of the connections it holds.
    func holds(_ fd: Int32) -> Bool
    /// A connection it holds is readable.
    func ready(_ fd: Int32, loop: EventLoop, _ handler: some EventLoopHandler)
    var isEmpty: Bool { get }
    /// Its earliest deadline; `expire` closes what is due.
    var nextDeadline: Double? { get }
    func expire(now: Double, loop: EventLoop)
}

/// How an accepted connection reached the handler.
package enum ArrivalPath: Sendable {
    /// Straight from the listening socket: the peer is the client.
    case direct
    /// Through a trusted balancer (`balancer`) whose PROXY header named the client.
    case proxied(balancer: SocketAddress)
    /// Through a balancer whose header named no address (UNKNOWN): the peer is the balancer.
    case unnamed
    /// The balancer's own connection (a LOCAL header: a health check): the peer is the balancer.
    case local
}

/// A loop's activity, for metrics read on other threads.
package final class LoopActivity: Sendable {
    package let wakeups = Atomic<Int>(0)

    package init() {}
}

/// Kinds of log lines that a storm can repeat, each rate-limited on its own.
package enum LogTopic: String, Hashable, Sendable {
    case refused = "refusals"
    case moved = "moves"
    case dropped = "drops"
    case sessionEnded = "session limits"
    case socketTrouble = "socket warnings"
    case proxyHeader = "PROXY header failures"
    case joined = "listener connects"
    case left = "listener leaves"
    case subscribed = "event subscriptions and leaves"
    case source = "live source refusals"
}
