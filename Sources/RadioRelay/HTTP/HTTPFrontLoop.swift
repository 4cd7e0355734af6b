import CLinux
import Glibc

/// The epoll loop behind an `HTTPFront`, confined to its thread. What it answers is `PublicRouter`'s decision and
/// what an event subscriber is sent is `EventStream`'s; this type carries out the connections' lives (accept, read,
/// hand over, send, shutdown, close) within the front end's limits.
final class HTTPFrontLoop {
    static let listenTag = UInt64.max
    private static let wakeTag = UInt64.max - 1
    /// The longest sleep, in milliseconds: titles reach event subscribers within it.
    private static let tick: Int32 = 250
    static let acceptBatch = 128
    /// How long, and how many bytes, a client may still send after its answer before it is closed.
    private static let drainSeconds = 1.0
    private static let drainLimit = 64 * 1024

    let front: HTTPFront
    let limits: HTTPFront.Limits
    let epoll: Epoll
    var connections: [Int32: FrontConnection] = [:]
    /// Event subscribers by mount path and by (mount, address), for the limits.
    var subscribers: [String: Int] = [:]
    var subscribersPerHost: [String: [HostKey: Int]] = [:]
    var backoff = AcceptBackoff()
    var listenWatched = true
    var logLimit = LogRateLimit<LogTopic>(limit: 10, window: 10)
    private var scratch = [UInt8](repeating: 0, count: 4096)

    init(front: HTTPFront) throws(SystemError) {
        self.front = front
        limits = front.limits
        epoll = try Epoll(capacity: 256)
        try epoll.add(front.listenSocket.rawValue, events: EPOLLIN.rawValue, tag: Self.listenTag)
        try epoll.add(front.wakeEvent.rawValue, events: EPOLLIN.rawValue, tag: Self.wakeTag)
    }

    /// Serves until `thread` is asked to stop. A failing `epoll_wait` is thrown: the loop cannot go on.
    func run(in thread: ServiceThread) throws {
        defer {
            for connection in connections.values { close(connection) }
        }
        while !thread.isStopping {
            thread.beat()
            let now = monotonicNow()
            for connection in connections.values where connection.phase.isTimed && now >= connection.deadline {
                close(connection)
            }
            if !subscribers.isEmpty { sendEvents(now: now) }
            if backoff.resumes(now: now) { watchListenSocket(true) }
            if let due = logLimit.nextSummary, now >= due {
                while let (topic, count) = logLimit.summary(now: now) {
                    Log.notice("http: … \(topic.rawValue) repeated \(count) more times (not logged)")
                }
            }
            let until = [backoff.resumeAt, earliestDeadline()].compactMap { $0 }.min()
            let wait = ListenerSchedule.waitMilliseconds(until: until, now: now, cap: Self.tick)
            let count = try epoll.wait(timeoutMilliseconds: wait)
            for index in 0..<count {
                let (tag, mask) = epoll.event(at: index)
                if tag == Self.listenTag {
                    acceptBatch()
                } else if tag == Self.wakeTag {
                    do {
                        _ = try front.wakeEvent.drain()
                    } catch {
                        Log.warning("http: \(error)")
                    }
                } else if let fd = Int32(exactly: tag), let connection = connections[fd] {
                    serve(connection, mask: mask)
                }
            }
        }
    }

    /// The earliest deadline of a connection in a timed phase. Linear, but the pending connections are bounded
    /// (`maxPending`), and event subscribers are skipped.
    private func earliestDeadline() -> Double? {
        var earliest: Double?
        for connection in connections.values where connection.phase.isTimed {
            earliest = min(earliest ?? connection.deadline, connection.deadline)
        }
        return earliest
    }

    // MARK: Connections

    private func serve(_ connection: FrontConnection, mask: UInt32) {
        switch connection.phase {
        case .reading: readHead(connection, mask: mask)
        case .writing:
            if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { return close(connection) }
            write(connection)
        case .draining: drain(connection)
        case .events:
            if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 { return close(connection) }
            if mask & EPOLLIN.rawValue != 0 {
                // A subscriber has nothing to say: what it sends is dropped, within the drain limit.
                guard let result = read(connection.fd, room: scratch.count) else { return close(connection) }
                if case .done(let count) = result {
                    connection.drained += count
                    if count == 0 || connection.drained > Self.drainLimit { return close(connection) }
                }
            }
            if mask & EPOLLOUT.rawValue != 0 { flushEvents(connection) }
        }
    }

    /// Reads what the client sent (up to the limit) and acts once the head is decided.
    func readHead(_ connection: FrontConnection, mask: UInt32) {
        var ended = mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
        while connection.input.count < limits.maxRequestBytes {
            let room = min(scratch.count, limits.maxRequestBytes - connection.input.count)
            guard let result = read(connection.fd, room: room) else { return close(connection) }
            guard case .done(let count) = result else { break }
            if count == 0 {
                ended = true
                break
            }
            connection.input += scratch[0..<count]
        }
        let head = HTTPRequestHead.parse(connection.input, limit: limits.maxRequestBytes)
        guard head != .incomplete else {
            if ended { close(connection) }  // gone before a whole request
            return
        }
        connection.input = []
        let (directory, broadcasters) = front.directory()
        switch PublicRouter.route(head, directory: directory) {
        case .respond(let response):
            respond(connection, response.encoded)
        case .stream(let mount, let responseHead):
            handOver(connection, to: broadcasters[mount], mount: directory.mounts[mount], head: responseHead)
        case .events(let mount, let responseHead):
            subscribe(connection, to: directory.mounts[mount], broadcaster: broadcasters[mount], head: responseHead)
        }
    }

    /// Gives a stream request's socket to the mount's station; it answers and streams from its own loop.
    private func handOver(
        _ connection: FrontConnection, to broadcaster: Broadcaster, mount: PublicDirectory.Mount, head: [UInt8]
    ) {
        do {
            try epoll.remove(connection.fd)
        } catch {
            Log.warning("http: \(connection.peer): \(error)")
            return close(connection)
        }
        connections[connection.fd] = nil
        guard let socket = connection.takeSocket() else { return }
        let arrival = ArrivingListener(socket: socket, peer: connection.peer, responseHead: head)
        if !broadcaster.handOver(arrival) {
            // The station's loop is far behind or stopped: the arrival (and its socket) is dropped here, after a
            // best-effort 503 on the socket it still owns.
            if let socket = arrival.takeSocket() {
                NetworkLoop.sendBestEffort(PublicRouter.text(503, "station busy\n").encoded, on: socket.rawValue)
            }
            logLimited(.refused, now: monotonicNow(), "http: \(connection.peer) refused: \(mount.path) is busy")
        }
    }

    /// Sends `bytes` and closes after a lingering drain.
    func respond(_ connection: FrontConnection, _ bytes: [UInt8]) {
        connection.output = bytes
        connection.sent = 0
        connection.phase = .writing
        connection.deadline = monotonicNow() + limits.headerTimeout
        do {
            try epoll.modify(connection.fd, events: EPOLLOUT.rawValue, tag: UInt64(connection.fd))
        } catch {
            Log.warning("http: \(error)")
            return close(connection)
        }
        write(connection)
    }

    /// Sends what is left of the answer; once it is all out, shuts the sending side and drains.
    private func write(_ connection: FrontConnection) {
        guard sendPending(connection) else { return close(connection) }
        guard connection.unsent == 0 else { return }  // EPOLLOUT is armed
        do {
            _ = try syscall("shutdown") { shutdown(connection.fd, Int32(SHUT_WR)) }
            try epoll.modify(connection.fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(connection.fd))
        } catch {
            return close(connection)  // the client is gone already (ENOTCONN), or epoll refused
        }
        connection.phase = .draining
        connection.deadline = monotonicNow() + min(Self.drainSeconds, limits.headerTimeout)
        drain(connection)
    }

    /// Reads and drops what the client still sends after its answer, until it closes.
    private func drain(_ connection: FrontConnection) {
        while true {
            guard let result = read(connection.fd, room: scratch.count) else { return close(connection) }
            guard case .done(let count) = result else { return }
            connection.drained += count
            if count == 0 || connection.drained > Self.drainLimit { return close(connection) }
        }
    }

    /// Sends as much of the connection's output as the socket takes; false on an error (the client is gone).
    func sendPending(_ connection: FrontConnection) -> Bool {
        while connection.unsent > 0 {
            let result: IOResult<Int>? = try? connection.output.withUnsafeBytes { buffer in
                var vector = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: buffer.baseAddress?.advanced(by: connection.sent)),
                    iov_len: connection.unsent)
                return try nonblockingSyscall("sendmsg") { rr_send_iov(connection.fd, &vector, 1) }
            }
            guard let result else { return false }
            guard case .done(let count) = result else { return true }
            guard count > 0 else { return false }
            connection.sent += count
        }
        connection.output.removeAll(keepingCapacity: true)
        connection.sent = 0
        return true
    }

    /// Forgets the connection: its socket (if it still has it) closes and leaves the epoll set with it.
    func close(_ connection: FrontConnection) {
        guard connections[connection.fd] === connection else { return }
        connections[connection.fd] = nil
        if case .events(let mount) = connection.phase { unsubscribe(connection, from: mount) }
    }

    /// `read` into the scratch buffer (at most `room` bytes); nil on an error (the connection is closed).
    private func read(_ fd: Int32, room: Int) -> IOResult<Int>? {
        let room = max(0, min(room, scratch.count))
        return try? nonblockingSyscall("read") {
            scratch.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, room) }
        }
    }

    func logLimited(_ topic: LogTopic, now: Double, _ message: @autoclosure () -> String) {
        guard Log.isEnabled(.notice) else { return }
        switch logLimit.admit(topic, now: now) {
        case .suppress: return
        case .writeAfter(let suppressed):
            Log.notice("http: … \(topic.rawValue) repeated \(suppressed) more times (not logged)")
            Log.notice(message())
        case .write: Log.notice(message())
        }
    }
}

extension FrontConnection.Phase {
    /// Whether the phase ends by the connection's deadline (all but an event stream, which lasts).
    var isTimed: Bool {
        if case .events = self { return false }
        return true
    }
}

@available(*, unavailable) extension HTTPFrontLoop: Sendable {}
