import CLinux
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The epoll loop behind a `StatusServer`, confined to the status thread. What it answers is `StatusRouter`'s
/// decision; the connections' lives (accept, read, send, shutdown, close) and their limits are the shared
/// `HTTPConnectionLoop`'s.
///
/// Every iteration — at least four a second — beats the thread's heartbeat, judges each station's liveness from
/// its heartbeats (one `Watchdog` per station, so `/health` answers from what the loop saw, not from one look),
/// and closes the connections whose deadline passed.
final class StatusLoop {
    /// The longest sleep, in milliseconds.
    private static let tick: Int32 = 250
    /// Connections accepted per wake-up at most.
    private static let acceptBatch = 64

    private let server: StatusServer
    private let limits: StatusServer.Limits
    private var watchdogs: [Watchdog]
    private var alive: [Bool]
    /// Accepting, request heads, answers, deadlines and per-address caps, shared with the HTTP front end.
    private let http: HTTPConnectionLoop

    init(server: StatusServer) throws(SystemError) {
        self.server = server
        limits = server.limits
        var watchdog = Watchdog()
        watchdog.allowance = server.limits.healthAllowance
        watchdogs = Array(repeating: watchdog, count: server.stations.count)
        alive = Array(repeating: true, count: server.stations.count)
        http = try HTTPConnectionLoop(
            label: "status", listenFD: server.listenSocket.rawValue, wakeFD: server.wakeEvent.rawValue,
            epollCapacity: 64, headerTimeout: server.limits.headerTimeout,
            maxRequestBytes: server.limits.maxRequestBytes, maxOpen: server.limits.maxConnections,
            maxPendingPerAddress: server.limits.maxPendingPerAddress)
    }

    /// Serves until `thread` is asked to stop. A failing `epoll_wait` is thrown: the loop cannot go on.
    func run(in thread: ServiceThread) throws {
        defer { http.connections.removeAll() }
        while !thread.isStopping {
            thread.beat()
            let now = monotonicNow()
            checkStations(now: now)
            http.closeExpired(now: now)
            if http.backoff.resumes(now: now) { http.watchListenSocket(true) }
            http.logSummaries(now: now)
            let until = [http.backoff.resumeAt, http.earliestDeadline()].compactMap { $0 }.min()
            let wait = ListenerSchedule.waitMilliseconds(until: until, now: now, cap: Self.tick)
            let count = try http.epoll.wait(timeoutMilliseconds: wait)
            for index in 0..<count {
                let (tag, mask) = http.epoll.event(at: index)
                if tag == HTTPConnectionLoop.listenTag {
                    acceptBatch()
                } else if tag == HTTPConnectionLoop.wakeTag {
                    drainWake()
                } else if let fd = Int32(exactly: tag), let connection = http.connections[fd] {
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
            guard let (fd, peer) = http.acceptOne() else { return }
            _ = http.register(FileDescriptor(owning: fd), peer: peer)
        }
    }

    // MARK: Connections

    private func serve(_ connection: HTTPConnection, mask: UInt32) {
        guard connection.phase == .reading else { return http.serveAnswer(connection, mask: mask) }
        guard let head = http.readHead(connection, mask: mask) else { return }
        let response = StatusRouter.respond(to: head, access: server.access) {
            server.snapshot(alive: alive, now: monotonicNow())
        }
        http.respond(connection, response.encoded)
    }
}
