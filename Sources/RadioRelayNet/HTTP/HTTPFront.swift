import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The public HTTP address shared by every station (`--http`, `[server] http`): browsers, apps and players that
/// speak HTTP the way Icecast does. A `Service` in the server's group, started after the stations and stopped
/// before them.
///
/// One thread runs an `HTTPFrontLoop`: it reads each request head (bounded in size and time), answers what it can
/// itself (`/`, HEAD, CORS preflights, errors), keeps title event streams, and hands a stream request's socket to
/// its station's network loop with the response head to send first. From there an HTTP listener is a listener like
/// any other: same burst, lag rules, limits and per-address count, in the same loop as the raw ones.
package final class HTTPFront: Service {
    package struct Limits: Sendable, Equatable {
        /// Seconds from accept to a complete request head (a slowloris is closed then), and to send an answer.
        package var headerTimeout = 5.0
        /// Bytes of request head at most: a longer request line is answered 414, a longer head 431.
        package var maxRequestBytes = 8192
        /// Connections still sending their request (or being answered) at once; beyond, the oldest of them is
        /// closed for each new one (`HTTPConnectionLoop`).
        package var maxPending = 2048
        /// Connections still sending their request from one address (an IPv4 address, an IPv6 /64) at once; beyond,
        /// the address's own oldest unfinished one is closed for the new one. Only unfinished heads count: a CDN's
        /// many completed requests from few addresses never do.
        package var maxPendingPerAddress = 64
        /// Seconds a kept connection (HLS: playlists and segments, one after another) may wait for its next
        /// request; it holds no pending-head place meanwhile, and is the first to give its place up when all are
        /// taken.
        package var keepAliveTimeout = 30.0
        /// Bytes an event stream subscriber may leave unread before it is closed.
        package var maxEventBacklog = 64 * 1024
        /// Event subscriptions from one address across every mount (`EventSubscribers`); the station's
        /// `max_per_ip`, when smaller, applies instead.
        package var maxSubscribersPerAddress = 64

        package init() {}
    }

    package let name = "http"
    /// Its listening socket, thread and stop (the shell it shares with the status endpoint).
    package let service: HTTPService
    /// Where it listens (the real port when 0 was asked for).
    package var address: SocketAddress { service.address }
    package let limits: Limits
    /// The stations whose mounts it serves: replaced after a reload (`setStations`).
    private let current: LockedBox<[any HTTPMounts]>
    package var stations: [any HTTPMounts] { current.snapshot }
    /// The loop's wake-ups (for metrics).
    package var activity: LoopActivity { service.activity }
    /// The listener places shared with the stations (event subscribers take one each).
    package let budget: ListenerBudget
    /// Every connection starts with a PROXY protocol header (`http_proxy_protocol`); a reload may change it (it
    /// applies to connections accepted from then on).
    package let proxyProtocol: Atomic<Bool>
    /// Connections closed for a missing, invalid or late PROXY header.
    package let proxyRejected = Atomic<Int>(0)
    /// The balancers whose PROXY header is believed (`http_proxy_from`): replaced by a reload.
    private let trusted: LockedBox<TrustedProxies>
    package var trustedProxies: TrustedProxies { trusted.snapshot }
    /// When it was made (wall clock): Icecast's `server_start` in `/status-json.xsl`.
    package let started = wallClockNow()

    /// Binds and listens on `address` now (or adopts `adoptedSocket`, already listening); `start()` begins serving.
    /// - Parameter proxyProtocol: whether connections come from a load balancer that sends a PROXY header first.
    package init(
        address: SocketAddress, stations: [any HTTPMounts], limits: Limits = Limits(), adoptedSocket: Int32? = nil,
        budget: ListenerBudget = ListenerBudget(), proxyProtocol: Bool = false,
        trustedProxies: TrustedProxies = .loopback,
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void = ServiceThread.terminateProcess
    ) throws {
        guard limits.headerTimeout.isFinite, limits.headerTimeout > 0, limits.maxRequestBytes >= 256,
            limits.maxPending >= 1, limits.maxPendingPerAddress >= 0, limits.maxEventBacklog >= 1024,
            limits.maxSubscribersPerAddress >= 0,
            limits.keepAliveTimeout.isFinite, limits.keepAliveTimeout > 0
        else { throw ConfigurationError("http: limits out of range (\(limits))") }
        service = try HTTPService(
            name: "http", address: address, adoptedSocket: adoptedSocket, backlog: 4096,
            onUnexpectedExit: onUnexpectedExit)
        self.current = LockedBox(stations)
        self.limits = limits
        self.budget = budget
        self.proxyProtocol = Atomic(proxyProtocol)
        self.trusted = LockedBox(trustedProxies)
    }
    /// Verdicts the authenticator delivered, by the ticket of the connection waiting for each: the loop takes them
    /// when it wakes (`HTTPFrontLoop+Auth`).
    package let verdicts = LockedBox<(open: Bool, due: [AuthDelivery])>((true, []))

    /// Hands a verdict to the loop and wakes it (called on the authenticator's threads). Once the loop has ended, the
    /// verdict is dropped here, and with it its session, whose remove goes at once (`ListenerSession`).
    package func deliver(_ delivery: AuthDelivery) {
        let taken = verdicts.withLock { box in
            guard box.open else { return false }
            box.due.append(delivery)
            return true
        }
        guard taken else { return }
        do {
            try service.wakeEvent.signal()
        } catch {
            Log.warning("http: cannot wake the loop for an authentication verdict: \(error)")
        }
    }

    /// The loop ended: verdicts delivered from now on are dropped, and those waiting are.
    package func closeVerdicts() {
        let dropped = verdicts.withLock { box in
            box.open = false
            defer { box.due = [] }
            return box.due
        }
        for delivery in dropped { delivery.session?.end(.stopped) }
    }

    /// The `server` of a backend call: `public_url`'s host, else the address listened on.
    package var serverName: String {
        if let base = publicURL.snapshot?.base, let authority = base.split(separator: "/").dropFirst().first {
            return IcecastStatus.hostName(String(authority))
        }
        return ListenerAdmission.shownAddress(address)
    }

    /// Where listeners reach this address (`public_url`): replaced by a reload.
    private let publicURL = LockedBox<PublicURL?>(nil)
    package func setPublicURL(_ url: PublicURL?) { publicURL.withLock { $0 = url } }

    /// The stations after a reload.
    package func setStations(_ stations: [any HTTPMounts]) { current.withLock { $0 = stations } }

    /// Whether connections accepted from now on start with a PROXY header (a reload).
    package func setProxyProtocol(_ on: Bool) { proxyProtocol.store(on, ordering: .relaxed) }

    /// The balancers believed from now on (a reload).
    package func setTrustedProxies(_ proxies: TrustedProxies) { trusted.withLock { $0 = proxies } }

    /// Who may make admin calls (`admin_user`, `admin_password`): replaced by a reload.
    private let admin = LockedBox(AdminGate(admin: nil))
    package var adminGate: AdminGate { admin.snapshot }
    package func setAdmin(_ credentials: AdminCredentials?) { admin.withLock { $0 = AdminGate(admin: credentials) } }

    /// The DJ accounts (`[dj NAME]`) and their bars: replaced by a reload, the bars of the accounts kept staying.
    private let djAccounts = LockedBox(SourceAccounts())
    package var accounts: SourceAccounts { djAccounts.snapshot }
    package func setAccounts(_ list: [DJAccount]) { djAccounts.withLock { $0.replace(with: list) } }
    /// Changes the accounts' bars (`killsource?ban=`) under the lock, returning what `change` returns.
    package func changeAccounts<Result>(_ change: (inout SourceAccounts) -> Result) -> Result {
        djAccounts.withLock { change(&$0) }
    }

    /// The reverse proxies in HTTP mode whose header names a request's client (`forwarded_from`); nil: none.
    private let forwarded = LockedBox<ForwardedFor?>(nil)
    package var forwarding: ForwardedFor? { forwarded.snapshot }
    package func setForwarding(_ forwarding: ForwardedFor?) { forwarded.withLock { $0 = forwarding } }

    /// Every station output's mount, with what its answers show, and the broadcaster behind each (same order).
    package func directory() -> (PublicDirectory, [Broadcaster]) {
        var directory = PublicDirectory()
        directory.serverStart = started
        directory.takesSources = takesSources
        directory.publicURL = publicURL.snapshot
        var broadcasters: [Broadcaster] = []
        for station in stations {
            let (name, history) = station.songHistory
            directory.histories[name] = history
            for (mount, broadcaster) in station.httpMounts {
                if directory.archives[name] == nil, mount.format != .mp3, let service = broadcaster.timeShift.snapshot {
                    directory.archives[name] = ArchiveShelf(mount: mount.path, service: service)
                }
                directory.mounts.append(mount)
                broadcasters.append(broadcaster)
            }
        }
        return (directory, broadcasters)
    }

    /// The desk of the station that takes live sources at `path` (nil: none does).
    package func sourceDesk(at path: String) -> SourceDesk? {
        for station in stations {
            guard let desk = station.sourceDesk, desk.takesSources, desk.paths.contains(path) else { continue }
            return desk
        }
        return nil
    }

    /// Whether any station takes live sources (then `PUT`, `SOURCE` and `/admin/` are the source protocol's).
    package var takesSources: Bool { stations.contains { $0.sourceDesk?.takesSources == true } }

    package func start() throws {
        try service.start { [self] thread in
            let loop = try HTTPFrontLoop(front: self)
            try loop.run(in: thread)
        }
        let mounts = directory().0.mounts.map(\.path).joined(separator: ", ")
        Log.notice("http listeners on http://\(address)/ (mounts \(mounts); a page to listen at /)")
    }

    /// Heartbeat of the front end's thread; empty before `start`.
    package var heartbeats: [Int] { service.heartbeats }

    @discardableResult
    package func stop(timeout: Double) -> Bool { service.stop(timeout: timeout) }
}

/// A verdict for the connection waiting under `ticket`; `session`: the backend admitted it (its remove is owed).
package struct AuthDelivery: Sendable {
    package let ticket: UInt64
    package let verdict: AuthVerdict
    package let session: ListenerSession?
}
