import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// The status endpoint (`/status.json`, `/metrics`, `/health`): a small HTTP/1.1 server for GET and HEAD on its own
/// thread, a `Service` in the server's group. It binds in `init`, so a taken or bad address fails at start-up.
///
/// One `ServiceThread` runs a `StatusLoop` (epoll over the listening socket, an eventfd for stop, and the
/// connections, all non-blocking). Limits, so a client — or many — cannot hold it: `maxRequestBytes` per request
/// head (then 414 or 431), `headerTimeout` from accept to a complete head and again to send the answer (then the
/// connection is closed), `maxConnections` at once (then the oldest is closed for a new one), at most
/// `maxPendingPerAddress` unfinished from one address (then that address's own oldest), one response per connection
/// (`Connection: close`). Reports are built on this thread from the stations' shared state and atomics; it never
/// touches a station's thread-confined state.
package final class StatusServer: Service {
    package struct Limits: Sendable, Equatable {
        /// Seconds from accept to a complete request head, and from then to the response sent.
        package var headerTimeout = 5.0
        /// Bytes of request head at most (request line and header fields).
        package var maxRequestBytes = 8192
        /// Connections at once; beyond, the oldest is closed for each new one, so a health check always gets in.
        package var maxConnections = 128
        /// Connections still sending their request from one address at once; beyond, the address's own oldest
        /// unfinished one is closed for the new one (so a health check from a busy address is still read).
        package var maxPendingPerAddress = 16
        /// Seconds a station's thread may go without a heartbeat before `/health` says 503.
        package var healthAllowance = 3.0

        package init() {}
    }

    package let name = "status"
    /// Its listening socket, thread and stop (the shell it shares with the HTTP front end).
    let service: HTTPService
    /// Where it listens (the real port when 0 was asked for).
    package var address: SocketAddress { service.address }
    /// The stations it reports on: replaced after a reload (`setStations`).
    private let current: LockedBox<[Station]>
    var stations: [Station] { current.snapshot }
    /// Who may read what (`status_token`, `status_hosts`): replaced by a reload.
    private let currentAccess: LockedBox<StatusAccess>
    var access: StatusAccess { currentAccess.snapshot }
    let limits: Limits
    /// When the server started (monotonic seconds): uptime counts from here.
    let startedAt: Double
    /// The loop's wake-ups (for metrics), and those of the server's other loops (the HTTP front end's).
    var activity: LoopActivity { service.activity }
    private let otherLoops: LockedBox<[(String, LoopActivity)]> = LockedBox([])
    /// The process's listener places, reported as their use and limit.
    let budget: ListenerBudget?
    /// The server's admission point: its roster (the admitted listeners `/status.json` lists) and its refusals by
    /// reason (every report); nil: none.
    let admission: ListenerAdmission?
    var roster: ListenerRoster? { admission?.roster }

    /// Binds and listens on `address` now (or adopts `adoptedSocket`, already listening); `start()` begins serving.
    package init(
        address: SocketAddress, stations: [Station], limits: Limits = Limits(), startedAt: Double = monotonicNow(),
        adoptedSocket: Int32? = nil, access: StatusAccess = StatusAccess(), budget: ListenerBudget? = nil,
        admission: ListenerAdmission? = nil,
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void = ServiceThread.terminateProcess
    ) throws {
        guard limits.headerTimeout.isFinite, limits.headerTimeout > 0, limits.maxRequestBytes >= 256,
            limits.maxConnections >= 1, limits.maxPendingPerAddress >= 0, limits.healthAllowance.isFinite,
            limits.healthAllowance > 0
        else { throw ConfigurationError("status endpoint: limits out of range (\(limits))") }
        service = try HTTPService(
            name: "status", address: address, adoptedSocket: adoptedSocket, backlog: 256,
            onUnexpectedExit: onUnexpectedExit)
        self.current = LockedBox(stations)
        self.currentAccess = LockedBox(access)
        self.limits = limits
        self.startedAt = startedAt
        self.budget = budget
        self.admission = admission
    }

    /// The stations after a reload.
    package func setStations(_ stations: [Station]) { current.withLock { $0 = stations } }

    /// The token and names after a reload.
    package func setAccess(_ access: StatusAccess) { currentAccess.withLock { $0 = access } }

    /// Reports the wake-ups of the server's other loops too (named "http" and the like).
    package func reportLoops(_ loops: [(String, LoopActivity)]) { otherLoops.withLock { $0 = loops } }

    /// The snapshot the reports are made from, with each station's liveness as the loop last judged it.
    func snapshot(alive: [Bool], now: Double) -> StatusSnapshot {
        var snapshot = StatusSnapshot(
            stations: stations, uptime: max(0, now - startedAt), alive: alive,
            loops: otherLoops.snapshot + [("status", activity)], budget: budget)
        snapshot.refusals = admission?.refusalCounts.map { RefusalStatus(reason: $0.0, count: $0.1) } ?? []
        snapshot.redirects = admission?.redirectCount ?? 0
        if let admission { snapshot.authentication = AuthenticationStatus(admission.authenticator.counters) }
        return snapshot
    }

    package func start() throws {
        try service.start { [self] thread in
            let loop = try StatusLoop(
                listenFD: service.listenSocket.rawValue, wakeFD: service.wakeEvent.rawValue,
                headerTimeout: limits.headerTimeout,
                maxRequestBytes: limits.maxRequestBytes, maxConnections: limits.maxConnections,
                maxPendingPerAddress: limits.maxPendingPerAddress, activity: activity,
                responder: StationStatusResponder(server: self))
            try loop.run(in: thread)
        }
        Log.info("status endpoint on http://\(address)/ (status.json, metrics, health)")
    }

    /// Heartbeat of the status thread; empty before `start`.
    package var heartbeats: [Int] { service.heartbeats }

    @discardableResult
    package func stop(timeout: Double) -> Bool { service.stop(timeout: timeout) }
}
