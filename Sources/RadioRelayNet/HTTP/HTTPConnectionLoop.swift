import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// What the two HTTP servers' loops share — the status endpoint's (`StatusLoop`) and the public front end's
/// (`HTTPFrontLoop`), both built on the `EventLoop` skeleton (accepting with back-off, the PROXY-header wait,
/// deadlines, heartbeat, stop): the table of connections, and a connection's life around its requests: read the
/// head within the limits, send the answer, then either wait idle for the next request (a kept connection: HLS, at
/// most `maxAnswersPerConnection`) or shut the sending side and drain what the client still sends (a lingering
/// close, so the answer is not destroyed by a reset), and close by each phase's deadline. What to answer is each
/// owner's decision.
///
/// Fair under abuse: at most `maxOpen` connections in a timed phase (reading, answering, draining) and at most
/// `maxPendingPerAddress` of them still sending their head from one address (`HostKey`: an IPv4 address or an IPv6
/// /64) — a fresh connection over that closes the address's own oldest unfinished one. When `maxOpen` are taken,
/// the connection due soonest (the oldest) gives its place to the new one: a client holding places with requests it
/// never finishes loses them, and a health check always gets in, even from the address that holds them. Deadlines live in the skeleton's `DeadlineHeap`, so idle
/// connections cost nothing per wake-up; a head is scanned once (`HTTPHeadScan`).
package final class HTTPConnectionLoop {
    /// How long, and how many bytes, a client may still send after its answer before it is closed.
    package static let drainSeconds = 1.0
    package static let drainLimit = 64 * 1024

    /// The skeleton: epoll, accepting, the PROXY-header wait, deadlines, heartbeat, rate-limited log lines.
    package let loop: EventLoop
    /// Names the server in log lines ("status", "http").
    package var label: String { loop.label }
    /// Seconds from accept to a complete head, and from then to the answer sent.
    package let headerTimeout: Double
    package let maxRequestBytes: Int
    /// Connections in a timed phase at most; beyond, the oldest is closed for a new one.
    package let maxOpen: Int
    /// Connections still sending their head from one address at most (0: no limit).
    package let maxPendingPerAddress: Int
    /// Seconds a kept connection may wait for its next request, and the most answers one connection is given.
    package let keepAliveTimeout: Double
    package static let maxAnswersPerConnection = 1000
    package var connections: [Int32: HTTPConnection] = [:]
    /// Connections still sending their head, by address, oldest first (at most `maxPendingPerAddress` each).
    package var pendingPerHost: [HostKey: [Int32]] = [:]
    /// Kept connections waiting for their next request, by when they began to: the first to give a place up.
    package var idleSince = DeadlineHeap<Int32>()
    /// Connections held for a station's reply (`HTTPConnectionLoop+Replies`).
    package var awaiting: [Int32: AwaitedReply] = [:]
    /// Told of each connection it forgets (the front end's event subscribers give their places back).
    package var onClose: ((HTTPConnection) -> Void)?
    /// Reads what an unfinished connection sent and acts on a whole head (its owner's reading of a request), before
    /// the connection could be evicted to make room (`makePendingRoom`).
    package var readPending: ((HTTPConnection) -> Void)?

    package init(
        label: String, listenFD: Int32, wakeFD: Int32, epollCapacity: Int, acceptBatch: Int, tick: Int32,
        headerTimeout: Double, maxRequestBytes: Int, maxOpen: Int, maxPendingPerAddress: Int,
        keepAliveTimeout: Double = 30, activity: LoopActivity = LoopActivity()
    ) throws(SystemError) {
        self.keepAliveTimeout = keepAliveTimeout
        self.maxOpen = max(1, maxOpen)
        self.maxPendingPerAddress = max(0, maxPendingPerAddress)
        self.headerTimeout = headerTimeout
        self.maxRequestBytes = maxRequestBytes
        loop = try EventLoop(
            label: label, listenFD: listenFD, wakeFDs: [wakeFD], epollCapacity: epollCapacity,
            acceptBatch: acceptBatch, tick: tick, activity: activity)
    }

    /// Registers a fresh connection (reading its head), counted as pending from its peer's address (the client its
    /// PROXY header named, behind a balancer); nil when epoll refused it: it is closed then. A place is made for it
    /// first when its address has `maxPendingPerAddress` unfinished (its oldest goes) or every place is taken.
    package func register(_ socket: consuming FileDescriptor, peer: SocketAddress) -> HTTPConnection? {
        let fd = socket.rawValue
        let now = monotonicNow()
        makePendingRoom(HostKey(peer), now: now)
        if loop.deadlines.count >= maxOpen { evictOldest(now: now) }
        do {
            try loop.epoll.add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(fd))
        } catch {
            Log.warning("\(label): connection not served: \(error)")
            return nil
        }
        let connection = HTTPConnection(socket: socket, peer: peer, deadline: now + headerTimeout)
        connections[fd] = connection
        loop.deadlines.set(fd, connection.deadline)
        countPending(connection)
        return connection
    }

    // MARK: The request

    /// Reads what the client sent (up to the limit); the head once it is decided, nil while more is needed (or the
    /// client left before a whole request: it is closed then).
    package func readHead(_ connection: HTTPConnection, mask: UInt32) -> HTTPRequestHead.Result? {
        var ended = mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
        while connection.input.count < maxRequestBytes {
            let room = min(loop.scratch.count, maxRequestBytes - connection.input.count)
            guard let result = read(connection.fd, room: room) else {
                close(connection)
                return nil
            }
            guard case .done(let count) = result else { break }
            if count == 0 {
                ended = true
                break
            }
            connection.input += loop.scratch[0..<count]
            if connection.idle { wake(connection) }
        }
        let head =
            connection.headScan.shouldParse(connection.input, limit: maxRequestBytes)
            ? HTTPRequestHead.parse(connection.input, limit: maxRequestBytes) : .incomplete
        guard head != .incomplete else {
            if ended { close(connection) }  // gone before a whole request
            return nil
        }
        connection.pipelined = connection.input.count > connection.headScan.scannedBytes
        connection.afterHead =
            connection.pipelined ? Array(connection.input[connection.headScan.scannedBytes...]) : []
        connection.input = []
        return head
    }

    // MARK: The answer

    /// Sends `bytes` as the connection's one answer, then closes it after a lingering drain.
    package func respond(_ connection: HTTPConnection, _ bytes: [UInt8]) {
        respond(connection, head: bytes, body: [], keepAlive: false)
    }

    /// Sends `head` and `body` (shared, not copied); then, with `keepAlive`, waits for the connection's next
    /// request (`keepAliveTimeout`), else closes it after a lingering drain. The answer has `headerTimeout` and a
    /// second for each 4 KiB to go out (a slow link's segment).
    package func respond(_ connection: HTTPConnection, head: [UInt8], body: [UInt8], keepAlive: Bool) {
        connection.output = head
        connection.body = body
        connection.sent = 0
        connection.keepAlive = keepAlive
        connection.phase = .writing
        endPending(connection)
        setDeadline(connection, monotonicNow() + headerTimeout + Double(head.count + body.count) / 4096)
        write(connection)
    }

    /// Carries a connection that has its answer on: writing it, then draining.
    package func serveAnswer(_ connection: HTTPConnection, mask: UInt32) {
        switch connection.phase {
        case .writing:
            if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { return close(connection) }
            guard awaiting[connection.fd] == nil else { return }  // its answer is not made yet
            write(connection)
        case .draining: drain(connection)
        case .reading, .events: break
        }
    }

    /// Sends what is left of the answer; once it is all out, waits for the next request (a kept connection), or
    /// shuts the sending side and drains.
    private func write(_ connection: HTTPConnection) {
        guard sendPending(connection) else { return close(connection) }
        guard connection.unsent == 0 else {
            // Backed up: only writability from now on (input is not read while the answer goes out). An answer the
            // socket takes at once — nearly all — costs no epoll change at all.
            return watch(connection, events: EPOLLOUT.rawValue, waitsForOutput: true)
        }
        if connection.keepAlive { return rest(connection) }
        do {
            _ = try syscall("shutdown") { shutdown(connection.fd, Int32(SHUT_WR)) }
        } catch {
            return close(connection)  // the client is gone already (ENOTCONN)
        }
        watch(connection, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, waitsForOutput: false)
        guard connections[connection.fd] === connection else { return }
        connection.phase = .draining
        setDeadline(connection, monotonicNow() + min(Self.drainSeconds, headerTimeout))
        drain(connection)
    }

    /// Sets what epoll reports for the connection when that changes (`waitsForOutput`: whether `EPOLLOUT` is
    /// armed); closes it when epoll refuses.
    private func watch(_ connection: HTTPConnection, events: UInt32, waitsForOutput: Bool) {
        guard connection.waitsForOutput != waitsForOutput else { return }
        do {
            try loop.epoll.modify(connection.fd, events: events, tag: UInt64(connection.fd))
            connection.waitsForOutput = waitsForOutput
        } catch {
            Log.warning("\(label): \(error)")
            close(connection)
        }
    }

    /// A kept connection after its answer: reading again, idle (no pending head, the keep-alive deadline) until its
    /// next request starts.
    private func rest(_ connection: HTTPConnection) {
        watch(connection, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, waitsForOutput: false)
        guard connections[connection.fd] === connection else { return }
        connection.phase = .reading
        connection.answered += 1
        connection.keepAlive = false
        connection.idle = true
        connection.headScan = HTTPHeadScan()
        let now = monotonicNow()
        setDeadline(connection, now + keepAliveTimeout)
        idleSince.set(connection.fd, now)
    }

    /// Reads and drops what the client still sends after its answer, until it closes.
    private func drain(_ connection: HTTPConnection) {
        while true {
            guard let result = read(connection.fd, room: loop.scratch.count) else { return close(connection) }
            guard case .done(let count) = result else { return }
            connection.drained += count
            if count == 0 || connection.drained > Self.drainLimit { return close(connection) }
        }
    }

    /// Sends as much of the connection's output (its head and body) as the socket takes (`sendmsg` with
    /// `MSG_NOSIGNAL`: a client that is gone gives EPIPE, never SIGPIPE); false on an error (the client is gone).
    package func sendPending(_ connection: HTTPConnection) -> Bool {
        while connection.unsent > 0 {
            let result: IOResult<Int>? = try? connection.output.withUnsafeBytes { head in
                try connection.body.withUnsafeBytes { body in
                    var vectors = (iovec(), iovec())
                    let headLeft = max(0, head.count - connection.sent)
                    let bodyDone = max(0, connection.sent - head.count)
                    vectors.0 = iovec(
                        iov_base: UnsafeMutableRawPointer(
                            mutating: head.baseAddress?.advanced(by: head.count - headLeft)),
                        iov_len: headLeft)
                    vectors.1 = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress?.advanced(by: bodyDone)),
                        iov_len: body.count - bodyDone)
                    return try withUnsafeMutablePointer(to: &vectors) { pair in
                        try pair.withMemoryRebound(to: iovec.self, capacity: 2) { first in
                            try nonblockingSyscall("sendmsg") {
                                headLeft > 0
                                    ? rr_send_iov(connection.fd, first, 2) : rr_send_iov(connection.fd, first + 1, 1)
                            }
                        }
                    }
                }
            }
            guard let result else { return false }
            guard case .done(let count) = result else { return true }
            guard count > 0 else { return false }
            connection.sent += count
            connection.listener?.bytes.add(count, ordering: .relaxed)
        }
        connection.output.removeAll(keepingCapacity: true)
        connection.body = []
        connection.sent = 0
        return true
    }

    // MARK: Ending

    /// Forgets the connection: its socket (if it still has it) closes and leaves the epoll set with it.
    package func close(_ connection: HTTPConnection) {
        guard connections[connection.fd] === connection else { return }
        untime(connection)
        idleSince.remove(connection.fd)
        awaiting[connection.fd] = nil
        connections[connection.fd] = nil
        onClose?(connection)
    }

    /// The connection leaves the timed phases (an event subscriber): no deadline, no longer pending.
    package func untime(_ connection: HTTPConnection) {
        endPending(connection)
        loop.deadlines.remove(connection.fd)
    }

    /// A line of a kind that can repeat (a notice), within the loop's rate limit.
    package func logLimited(_ topic: LogTopic, now: Double, _ message: @autoclosure () -> String) {
        loop.logLimited(topic, .notice, now: now, message())
    }

    /// `read` into the loop's scratch buffer (at most `room` bytes); nil on an error (the connection is closed).
    package func read(_ fd: Int32, room: Int) -> IOResult<Int>? {
        let room = max(0, min(room, loop.scratch.count))
        return try? nonblockingSyscall("read") {
            loop.scratch.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, room) }
        }
    }

}

@available(*, unavailable) extension HTTPConnectionLoop: Sendable {}
