import CLinux
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The loop behind a `StatusServer`, confined to the status thread, on the `EventLoop` skeleton. What it answers
/// is `StatusRouter`'s decision; the connections' lives (read, send, shutdown, close) and their limits are the shared
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
    /// Request heads, answers, deadlines and per-address caps, shared with the HTTP front end.
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
            epollCapacity: 64, acceptBatch: Self.acceptBatch, tick: Self.tick,
            headerTimeout: server.limits.headerTimeout, maxRequestBytes: server.limits.maxRequestBytes,
            maxOpen: server.limits.maxConnections, maxPendingPerAddress: server.limits.maxPendingPerAddress,
            activity: server.activity)
    }

    /// Serves until `thread` is asked to stop. A failing `epoll_wait` is thrown: the loop cannot go on.
    func run(in thread: ServiceThread) throws {
        defer { http.connections.removeAll() }
        try http.loop.run(in: thread, self)
    }

    /// The stations' heartbeats, judged. The stations are read here and let go before the loop waits: a station
    /// a reload replaced must not live on in this thread's hands (its ports and threads would outlast it).
    fileprivate func checkStations(now: Double) {
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

    // MARK: Connections

    fileprivate func serve(_ connection: HTTPConnection, mask: UInt32) {
        guard connection.phase == .reading else { return http.serveAnswer(connection, mask: mask) }
        guard let head = http.readHead(connection, mask: mask) else { return }
        let response = StatusRouter.respond(to: head, access: server.access) {
            server.snapshot(alive: alive, now: monotonicNow())
        }
        http.respond(connection, response.encoded)
    }
}

/// What the event-loop skeleton hands the status endpoint: connections straight from its clients (no balancer in
/// front), the wake-up (the stop), socket events and deadlines; before each sleep, the stations' heartbeats.
extension StatusLoop: EventLoopHandler {
    var expectedProxies: ExpectedProxies? { nil }

    func accepted(_ socket: consuming FileDescriptor, peer: SocketAddress, via: ArrivalPath) {
        _ = http.register(socket, peer: peer)
    }

    func refusedProxied(peer: SocketAddress) {}

    func woken(_ source: Int) {}

    func ready(_ fd: Int32, mask: UInt32) {
        guard let connection = http.connections[fd] else { return }
        serve(connection, mask: mask)
    }

    func expired(_ fd: Int32, now: Double) {
        guard let connection = http.connections[fd] else { return }
        http.expired(connection)
    }

    func prepare(now: Double) -> Double? {
        checkStations(now: now)
        return nil
    }

    func awake() {}

    func settle() {}
}
