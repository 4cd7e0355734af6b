import Foundation
import Glibc

/// Runs stations until SIGTERM or SIGINT: reports to systemd (READY, STATUS, WATCHDOG, STOPPING) and stops cleanly.
public final class Server {
    public let stations: [Station]
    private let notifier = SystemdNotifier()

    public init(stations: [Station]) {
        self.stations = stations
    }

    /// Blocks the signals it handles in every thread: call before any thread is started.
    public static func blockSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Starts every station, then waits for a stop signal on the calling thread.
    public func run() throws {
        for station in stations { try station.start() }
        notifier.ready(status: statusLine())
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, signal) }
        var lastStatus = monotonicNow()
        let tick = min(1.0, notifier.watchdogInterval ?? 1.0)
        while true {
            var timeout = timespec(tv_sec: Int(tick), tv_nsec: Int((tick - tick.rounded(.down)) * 1e9))
            let signal = sigtimedwait(&set, nil, &timeout)
            if signal == SIGTERM || signal == SIGINT {
                Log.notice("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                break
            }
            if signal == SIGHUP { Log.notice("SIGHUP: configuration reload is not supported yet; ignored") }
            if notifier.watchdogInterval != nil { notifier.watchdog() }
            if monotonicNow() - lastStatus >= 5 {
                notifier.status(statusLine())
                lastStatus = monotonicNow()
            }
        }
        notifier.stopping()
        for station in stations { station.stop() }
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
            return "\(station.name): \(station.broadcaster.counters.listeners.load(ordering: .relaxed)) listeners, \(upstream)"
        }.joined(separator: "; ")
    }
}
