import CLinux
import Glibc
import Synchronization

/// Runs stations until SIGTERM or SIGINT: starts them in order as one service group, reports to systemd (READY,
/// STATUS, WATCHDOG, RELOADING, STOPPING), reloads its configuration on SIGHUP (`Server+Reload.swift`), and stops
/// the stations in reverse order.
///
/// The watchdog is pinged only while every thread of every station keeps beating: a pipeline or network loop that
/// hangs stops the pings, and systemd restarts the service (`WatchdogSec=`).
package final class Server {
    /// The stations running now (a reload adds, replaces and removes some). Confined to the calling thread.
    package internal(set) var stations: [Station]
    private let group: ServiceGroup
    let notifier = SystemdNotifier()
    /// Reads the configuration again on SIGHUP; nil when the stations did not come from a file.
    let reload: (() throws -> ConfigFile)?
    /// The log level the command line forced (it wins over the file's on a reload too).
    let logLevelOverride: Log.Priority?

    package init(
        stations: [Station], reload: (() throws -> ConfigFile)? = nil, logLevelOverride: Log.Priority? = nil
    ) {
        self.stations = stations
        self.group = ServiceGroup(stations)
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
        // Before any listener: the open-files limit raised, and all stations' listeners capped under it.
        ResourceLimits.apply(configured: stations.map(\.broadcaster.configuration.maxListeners))
        try group.start()
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
                switch watchdog.check(beats: stations.flatMap(\.heartbeats), now: monotonicNow()) {
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
        // In reverse order; the stations a reload changed are no longer the group's.
        var clean = true
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
