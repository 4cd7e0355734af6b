import CLinux
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// Runs stations until SIGTERM or SIGINT: starts them in order as one service group, reports to systemd (READY,
/// STATUS, WATCHDOG, RELOADING, STOPPING), reloads its configuration on SIGHUP (`Server+Reload.swift`), and stops
/// the stations in reverse order.
///
/// The watchdog is pinged only while every thread of every station (and the status endpoint's) keeps beating: a
/// pipeline or network loop that hangs stops the pings, and systemd restarts the service (`WatchdogSec=`).
///
/// With a status address, the status endpoint (`StatusServer`: `/status.json`, `/metrics`, `/health`) is bound at
/// once and runs as the group's last service, so it starts after every station and stops before them.
package final class Server {
    /// The stations running now (a reload adds, replaces and removes some). Confined to the calling thread.
    package internal(set) var stations: [Station] {
        didSet {
            status?.setStations(stations)
            http?.setStations(stations)
        }
    }
    /// The status endpoint, when a status address was given.
    package let status: StatusServer?
    /// The public HTTP address (mounts, `/`, events), when one was given.
    package let http: HTTPFront?
    /// Starts everything in order (stopping what started if one fails); dropped once all run, so that a station a
    /// reload stops is released at once (its listening socket closed, its port free for its successor).
    private var group: ServiceGroup?
    let notifier = SystemdNotifier()
    /// Reads the configuration again on SIGHUP; nil when the stations did not come from a file.
    let reload: (() throws -> ConfigFile)?
    /// The log level the command line forced (it wins over the file's on a reload too).
    let logLevelOverride: Log.Priority?

    package convenience init(
        stations: [Station], reload: (() throws -> ConfigFile)? = nil, logLevelOverride: Log.Priority? = nil
    ) {
        self.init(stations: stations, statusServer: nil, reload: reload, logLevelOverride: logLevelOverride)
    }

    /// - Parameter status: where the status endpoint listens; nil: no endpoint. Binding it can fail (address in
    ///   use, no permission), which is thrown here, before anything starts.
    /// - Parameter statusLimits: its request size, timeout and connection limits (tests shorten the timeout).
    /// - Parameter statusSocket: an already listening socket for it (socket activation) instead of binding.
    /// - Parameter http: where HTTP listeners connect; nil: raw TCP only. Bound here too.
    /// - Parameter httpProxyProtocol: HTTP connections start with a PROXY header from a load balancer.
    /// - Parameter httpProxyFrom: the balancers whose header is believed; nil: loopback only.
    package convenience init(
        stations: [Station], status: SocketAddress?, statusLimits: StatusServer.Limits = StatusServer.Limits(),
        statusSocket: Int32? = nil, statusAccess: StatusAccess = StatusAccess(), http: SocketAddress? = nil,
        httpSocket: Int32? = nil,
        httpProxyProtocol: Bool = false, httpProxyFrom: TrustedProxies? = nil, reload: (() throws -> ConfigFile)? = nil,
        logLevelOverride: Log.Priority? = nil
    ) throws {
        let endpoint = try status.map {
            try StatusServer(
                address: $0, stations: stations, limits: statusLimits, adoptedSocket: statusSocket,
                access: statusAccess)
        }
        let front = try http.map {
            try HTTPFront(
                address: $0, stations: stations, adoptedSocket: httpSocket, proxyProtocol: httpProxyProtocol,
                trustedProxies: httpProxyFrom ?? .loopback)
        }
        self.init(
            stations: stations, statusServer: endpoint, http: front, reload: reload,
            logLevelOverride: logLevelOverride)
    }

    package init(
        stations: [Station], statusServer: StatusServer?, http: HTTPFront? = nil,
        reload: (() throws -> ConfigFile)? = nil, logLevelOverride: Log.Priority? = nil
    ) {
        self.stations = stations
        self.status = statusServer
        self.http = http
        // Every network loop of the process's pool, by thread name, and the HTTP front end.
        let pool = NetworkPool.process.snapshot?.members.map { ($0.name, $0.activity) } ?? []
        statusServer?.reportLoops(pool + (http.map { [("http", $0.activity)] } ?? []))
        // The HTTP front end starts after the stations it hands listeners to, the status endpoint last.
        let services: [any Service] = stations + (http.map { [$0] } ?? []) + (statusServer.map { [$0] } ?? [])
        self.group = ServiceGroup(services)
        self.reload = reload
        self.logLevelOverride = logLevelOverride
    }

    /// Blocks the signals it handles in every thread: call before any thread is started.
    package static func blockSignals() {
        var set = handledSignals
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    private static var handledSignals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, signal) }
        return set
    }

    /// Starts every station, then waits for a stop signal on the calling thread.
    package func run() throws {
        // Before any listener: the open-files limit raised, and all outputs' listeners capped under it (each
        // rendition counts as a station: its own limit, socket, epoll and eventfd).
        ResourceLimits.apply(
            configured: stations.flatMap { $0.outputs.map(\.broadcaster.configuration.maxListeners) },
            loops: NetworkPool.process.snapshot?.members.count ?? stations.count)
        try group?.start()
        group = nil
        notifier.ready(status: statusLine())
        var set = Self.handledSignals
        var lastStatus = monotonicNow()
        // A thread may go half the watchdog interval without a beat (never under a second: a network loop sleeps up to
        // half a second between beats).
        var watchdog = Watchdog()
        watchdog.allowance = max(1, notifier.watchdogInterval ?? 1)
        let tick = min(1.0, notifier.watchdogInterval ?? 1.0)
        while true {
            var timeout = timespec(tv_sec: Int(tick), tv_nsec: Int((tick - tick.rounded(.down)) * 1e9))
            let signal = sigtimedwait(&set, nil, &timeout)
            if signal == SIGTERM || signal == SIGINT {
                Log.notice("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                break
            }
            if signal == SIGHUP { reloadConfiguration() }
            if notifier.watchdogInterval != nil {
                let beats = stations.flatMap(\.heartbeats) + (status?.heartbeats ?? []) + (http?.heartbeats ?? [])
                switch watchdog.check(beats: beats, now: monotonicNow()) {
                case .alive: notifier.watchdog()
                case .stuck(let seconds):
                    Log.error(
                        "a server thread has not run for \(Int(exactly: seconds.rounded()) ?? 0) s; withholding the watchdog ping"
                    )
                }
            }
            if monotonicNow() - lastStatus >= 5 {
                notifier.status(statusLine())
                lastStatus = monotonicNow()
            }
        }
        notifier.stopping()
        // In reverse order: the status endpoint, the HTTP front end, then the stations (those a reload changed are no
        // longer the group's, so the list is walked here).
        var clean = status?.stop(timeout: 5) ?? true
        if let http, !http.stop(timeout: 5) { clean = false }
        for station in stations.reversed() where !station.stop(timeout: 5) { clean = false }
        if !clean { Log.warning("a thread did not stop in time") }
        Log.notice("stopped")
    }

    /// `STATUS=`: stations with their upstream up out of all, listeners in all, then each station.
    func statusLine() -> String {
        let up = stations.filter { $0.state.upstream == .connected }.count
        let listeners = stations.reduce(0) { $0 + $1.listeners }
        let each = stations.map { station in
            let state = station.state
            let upstream: String
            switch state.upstream {
            case .connected: upstream = "upstream up"
            case .connecting: upstream = "connecting"
            case .retrying: upstream = "upstream down"
            }
            return "\(station.name): \(station.listeners) listeners, \(upstream)"
        }
        return (["\(up)/\(stations.count) stations up, \(listeners) listeners"] + each).joined(separator: "; ")
    }
}

@available(*, unavailable) extension Server: Sendable {}
