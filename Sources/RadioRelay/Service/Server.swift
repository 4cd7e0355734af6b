import Glibc
import Synchronization

/// Runs stations until SIGTERM or SIGINT: starts them in order as one service group, reports to systemd (READY,
/// STATUS, WATCHDOG, STOPPING) and stops them in reverse order.
///
/// The watchdog is pinged only while every thread of every station (and the status endpoint's) keeps beating: a
/// pipeline or network loop that hangs stops the pings, and systemd restarts the service (`WatchdogSec=`).
///
/// With a status address, the status endpoint (`StatusServer`: `/status.json`, `/metrics`, `/health`) is bound at
/// once and runs as the group's last service, so it starts after every station and stops before them.
package final class Server {
    package let stations: [Station]
    /// The status endpoint, when a status address was given.
    package let status: StatusServer?
    private let group: ServiceGroup
    private let notifier = SystemdNotifier()

    package convenience init(stations: [Station]) { self.init(stations: stations, statusServer: nil) }

    /// - Parameter status: where the status endpoint listens; nil: no endpoint. Binding it can fail (address in
    ///   use, no permission), which is thrown here, before anything starts.
    /// - Parameter statusLimits: its request size, timeout and connection limits (tests shorten the timeout).
    /// - Parameter statusSocket: an already listening socket for it (socket activation) instead of binding.
    package convenience init(
        stations: [Station], status: SocketAddress?, statusLimits: StatusServer.Limits = StatusServer.Limits(),
        statusSocket: Int32? = nil
    ) throws {
        let endpoint = try status.map {
            try StatusServer(address: $0, stations: stations, limits: statusLimits, adoptedSocket: statusSocket)
        }
        self.init(stations: stations, statusServer: endpoint)
    }

    package init(stations: [Station], statusServer: StatusServer?) {
        self.stations = stations
        self.status = statusServer
        self.group = ServiceGroup(stations + (statusServer.map { [$0] } ?? []))
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
        // Before any listener: the open-files limit raised, and all stations' listeners capped under it.
        ResourceLimits.apply(configured: stations.map(\.broadcaster.configuration.maxListeners))
        try group.start()
        notifier.ready(status: statusLine())
        var set = Self.handledSignals
        var lastStatus = monotonicNow()
        var watchdog = Watchdog()
        let tick = min(1.0, notifier.watchdogInterval ?? 1.0)
        while true {
            var timeout = timespec(tv_sec: Int(tick), tv_nsec: Int((tick - tick.rounded(.down)) * 1e9))
            let signal = sigtimedwait(&set, nil, &timeout)
            if signal == SIGTERM || signal == SIGINT {
                Log.notice("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                break
            }
            if signal == SIGHUP { Log.notice("SIGHUP: configuration reload is not supported yet; ignored") }
            if notifier.watchdogInterval != nil {
                let beats = stations.flatMap(\.heartbeats) + (status?.heartbeats ?? [])
                switch watchdog.check(beats: beats, now: monotonicNow()) {
                case .alive: notifier.watchdog()
                case .stuck(let seconds):
                    Log.error("a server thread has not run for \(Int(seconds)) s; withholding the watchdog ping")
                }
            }
            if monotonicNow() - lastStatus >= 5 {
                notifier.status(statusLine())
                lastStatus = monotonicNow()
            }
        }
        notifier.stopping()
        if !group.stop(timeout: 5) { Log.warning("a thread did not stop in time") }
        Log.notice("stopped")
    }

    func statusLine() -> String {
        stations.map { station in
            let state = station.state
            let upstream: String
            switch state.upstream {
            case .connected: upstream = "upstream up"
            case .connecting: upstream = "connecting"
            case .retrying: upstream = "upstream down"
            }
            let listeners = station.broadcaster.counters.listeners.load(ordering: .relaxed)
            return "\(station.name): \(listeners) listeners, \(upstream)"
        }.joined(separator: "; ")
    }
}

@available(*, unavailable) extension Server: Sendable {}
