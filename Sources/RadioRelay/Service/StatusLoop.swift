import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// The epoll loop behind a `StatusServer`, confined to the status thread. What it answers is `StatusRouter`'s
/// decision; the connections' lives (accept, read, send, shutdown, close) and their limits are the shared
/// `HTTPConnectionLoop`'s.
///
/// Every iteration — at least four a second — beats the thread's heartbeat, judges each station's liveness from
/// its heartbeats (one `Watchdog` per station, so `/health` answers from what the loop saw, not from one look),
/// and closes the connections whose deadline passed.
final class StatusLoop: HTTPConnectionLoop {
    /// The longest sleep, in milliseconds.
    private static let tick: Int32 = 250
    /// Connections accepted per wake-up at most.
    private static let acceptBatch = 64

    private let server: StatusServer
    private let limits: StatusServer.Limits
    private var watchdogs: [Watchdog]
    private var alive: [Bool]

    init(server: StatusServer) throws(SystemError) {
        self.server = server
        limits = server.limits
        var watchdog = Watchdog()
        watchdog.allowance = server.limits.healthAllowance
        watchdogs = Array(repeating: watchdog, count: server.stations.count)
        alive = Array(repeating: true, count: server.stations.count)
        try super.init(
            label: "status", listenFD: server.listenSocket.rawValue, wakeFD: server.wakeEvent.rawValue,
            epollCapacity: 64, headerTimeout: server.limits.headerTimeout,
            maxRequestBytes: server.limits.maxRequestBytes, maxOpen: server.limits.maxConnections,
            maxPendingPerAddress: server.limits.maxPendingPerAddress)
    }

    /// Serves until `thread` is asked to stop. A failing `epoll_wait` is thrown: the loop cannot go on.
    func run(in thread: ServiceThread) throws {
        defer { connections.removeAll() }
        while !thread.isStopping {
            thread.beat()
            let now = monotonicNow()
            checkStations(now: now)
            closeExpired(now: now)
            if backoff.resumes(now: now) { watchListenSocket(true) }
            logSummaries(now: now)
            let until = [backoff.resumeAt, earliestDeadline()].compactMap { $0 }.min()
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

    /// The stations' heartbeats, judged. The stations are read here and let go before the loop waits: a station
    /// a reload replaced must not live on in this thread's hands (its ports and threads would outlast it).
    private func checkStations(now: Double) {
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
            guard let (fd, peer) = acceptOne() else { return }
            _ = register(FileDescriptor(owning: fd), peer: peer)
        }
    }

    // MARK: Connections

    private func serve(_ connection: HTTPConnection, mask: UInt32) {
        guard connection.phase == .reading else { return serveAnswer(connection, mask: mask) }
        guard let head = readHead(connection, mask: mask) else { return }
        let response = StatusRouter.respond(to: head, access: server.access) {
            server.snapshot(alive: alive, now: monotonicNow())
        }
        respond(connection, response.encoded)
    }
}
