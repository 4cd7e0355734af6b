import CLinux
import Glibc

/// The epoll loop behind a `StatusServer`, confined to the status thread. What it answers is `StatusRouter`'s
/// decision; this type carries out the connections' lives (accept, read, send, shutdown, close) and their limits.
///
/// Every iteration — at least four a second — beats the thread's heartbeat, judges each station's liveness from
/// its heartbeats (one `Watchdog` per station, so `/health` answers from what the loop saw, not from one look),
/// and closes the connections whose deadline passed.
final class StatusLoop {
    private static let listenTag = UInt64.max
    private static let wakeTag = UInt64.max - 1
    /// The longest sleep, in milliseconds.
    private static let tick: Int32 = 250
    /// Connections accepted per wake-up at most.
    private static let acceptBatch = 16
    /// How long, and how many bytes, a client may still send after its response before it is closed.
    private static let drainSeconds = 1.0
    private static let drainLimit = 64 * 1024

    private let server: StatusServer
    private let limits: StatusServer.Limits
    private let epoll: Epoll
    private var connections: [Int32: StatusConnection] = [:]
    private var watchdogs: [Watchdog]
    private var alive: [Bool]
    private var backoff = AcceptBackoff()
    private var listenWatched = true
    private var scratch = [UInt8](repeating: 0, count: 4096)
    /// Sent to a client over `maxConnections` before it is closed.
    private let busy = HTTPResponse.text(503, "too many status connections\n").encoded

    init(server: StatusServer) throws(SystemError) {
        self.server = server
        limits = server.limits
        epoll = try Epoll(capacity: 64)
        try epoll.add(server.listenSocket.rawValue, events: EPOLLIN.rawValue, tag: Self.listenTag)
        try epoll.add(server.wakeEvent.rawValue, events: EPOLLIN.rawValue, tag: Self.wakeTag)
        var watchdog = Watchdog()
        watchdog.allowance = server.limits.healthAllowance
        watchdogs = Array(repeating: watchdog, count: server.stations.count)
        alive = Array(repeating: true, count: server.stations.count)
    }

    /// Serves until `thread` is asked to stop. A failing `epoll_wait` is thrown: the loop cannot go on.
    func run(in thread: ServiceThread) throws {
        defer { connections.removeAll() }
        while !thread.isStopping {
            thread.beat()
            let now = monotonicNow()
            let stations = server.stations
            if stations.count != watchdogs.count {
                // A reload changed the stations: everyone starts afresh.
                var watchdog = Watchdog()
                watchdog.allowance = limits.healthAllowance
                watchdogs = Array(repeating: watchdog, count: stations.count)
                alive = Array(repeating: true, count: stations.count)
            }
            for index in stations.indices {
                let beats = stations[index].heartbeats
                alive[index] = watchdogs[index].check(beats: beats, now: now) == .alive
            }
            for connection in connections.values where now >= connection.deadline { close(connection) }
            if backoff.resumes(now: now) { watchListenSocket(true) }
            let until = ([backoff.resumeAt] + connections.values.map(\.deadline)).compactMap { $0 }.min()
            let wait = ListenerSchedule.waitMilliseconds(until: until, now: now, cap: Self.tick)
            let count = try epoll.wait(timeoutMilliseconds: wait)
            for index in 0..<count {
                let (tag, mask) = epoll.event(at: index)
                if tag == Self.listenTag {
                    acceptBatch()
                } else if tag == Self.wakeTag {
                    drainWake()
                } else if let fd = Int32(exactly: tag), let connection = connections[fd] {
                    serve(connection, mask: mask)
                }
            }
        }
    }

    private func drainWake() {
        do {
            _ = try server.wakeEvent.drain()
        } catch {
            Log.warning("status: \(error)")
        }
    }

    // MARK: Accepting

    private func acceptBatch() {
        for _ in 0..<Self.acceptBatch {
            let accepted: IOResult<Int32>
            do {
                accepted = try nonblockingSyscall("accept4") { rr_accept4(server.listenSocket.rawValue, nil, nil) }
            } catch {
                if error.errno == ECONNABORTED || error.errno == EPROTO || error.errno == EPERM { continue }
                // Out of descriptors or memory: stop watching the (level-triggered) socket for a pause.
                let failure = backoff.failed(now: monotonicNow())
                watchListenSocket(false)
                if let times = failure.report {
                    Log.error("status: cannot accept: \(error) (\(times) times); pausing \(failure.pause) s")
                }
                return
            }
            guard case .done(let fd) = accepted else { return }
            backoff.accepted()
            let socket = FileDescriptor(owning: fd)
            if connections.count >= limits.maxConnections {
                // Best effort: a fresh socket's send buffer takes these few bytes; the socket closes here.
                send(busy, from: 0, on: fd)
                continue
            }
            do {
                try epoll.add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(fd))
            } catch {
                Log.warning("status: connection not served: \(error)")
                continue
            }
            connections[fd] = StatusConnection(socket: socket, deadline: monotonicNow() + limits.headerTimeout)
        }
    }

    private func watchListenSocket(_ watched: Bool) {
        guard watched != listenWatched else { return }
        do {
            try epoll.modify(
                server.listenSocket.rawValue, events: watched ? EPOLLIN.rawValue : 0, tag: Self.listenTag)
            listenWatched = watched
        } catch {
            Log.warning("status: listening socket: \(error)")
        }
    }

    // MARK: Connections

    private func serve(_ connection: StatusConnection, mask: UInt32) {
        switch connection.phase {
        case .reading: readHead(connection, mask: mask)
        case .writing:
            if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { return close(connection) }
            write(connection)
        case .draining: drain(connection)
        }
    }

    /// Reads what the client sent (up to the limit) and answers once the head is decided.
    private func readHead(_ connection: StatusConnection, mask: UInt32) {
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
        let response = StatusRouter.respond(to: head) {
            server.snapshot(alive: alive, now: monotonicNow())
        }
        connection.input = []
        connection.output = response.encoded
        connection.phase = .writing
        connection.deadline = monotonicNow() + limits.headerTimeout
        do {
            // Only writability from now on: input is not read while the response goes out.
            try epoll.modify(connection.fd, events: EPOLLOUT.rawValue, tag: UInt64(connection.fd))
        } catch {
            Log.warning("status: \(error)")
            return close(connection)
        }
        write(connection)
    }

    /// Sends what is left of the response; once it is all out, shuts the sending side and drains.
    private func write(_ connection: StatusConnection) {
        while connection.sent < connection.output.count {
            guard let sent = send(connection.output, from: connection.sent, on: connection.fd) else {
                return close(connection)
            }
            guard case .done(let count) = sent else { return }  // EPOLLOUT is armed
            guard count > 0 else { return close(connection) }
            connection.sent += count
        }
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

    /// Reads and drops what the client still sends after its response, until it closes.
    private func drain(_ connection: StatusConnection) {
        while true {
            guard let result = read(connection.fd, room: scratch.count) else { return close(connection) }
            guard case .done(let count) = result else { return }
            connection.drained += count
            if count == 0 || connection.drained > Self.drainLimit { return close(connection) }
        }
    }

    /// Forgets the connection: its socket closes (and leaves the epoll set) with it.
    private func close(_ connection: StatusConnection) {
        connections[connection.fd] = nil
    }

    // MARK: I/O

    /// `read` into the scratch buffer (at most `room` bytes); nil on an error (the connection is closed).
    private func read(_ fd: Int32, room: Int) -> IOResult<Int>? {
        let room = max(0, min(room, scratch.count))
        return try? nonblockingSyscall("read") {
            scratch.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, room) }
        }
    }

    /// `sendmsg` with MSG_NOSIGNAL (a client that is gone gives EPIPE, never SIGPIPE) of `bytes` from `offset`;
    /// nil on an error.
    @discardableResult
    private func send(_ bytes: [UInt8], from offset: Int, on fd: Int32) -> IOResult<Int>? {
        guard offset >= 0, offset < bytes.count else { return .done(0) }
        return try? bytes.withUnsafeBytes { buffer in
            var vector = iovec(
                iov_base: UnsafeMutableRawPointer(mutating: buffer.baseAddress?.advanced(by: offset)),
                iov_len: buffer.count - offset)
            return try nonblockingSyscall("sendmsg") { rr_send_iov(fd, &vector, 1) }
        }
    }
}

@available(*, unavailable) extension StatusLoop: Sendable {}
