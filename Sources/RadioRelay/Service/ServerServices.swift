import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The stations of a server as one service of its group: the ones running now (a reload adds, replaces and removes
/// some, starting and stopping each itself), each started with its pushes after it, stopped in reverse order (a
/// station stops its pushes first). The group holds this, not the stations, so a station a reload let go is
/// released at once.
final class StationServices: Service {
    let name = "stations"
    private let current: LockedBox<[Station]>

    init(_ stations: [Station]) { current = LockedBox(stations) }

    var stations: [Station] {
        get { current.snapshot }
        set { current.withLock { $0 = newValue } }
    }

    /// Starts each station, then its pushes, in order; if one cannot start, those started are stopped again.
    func start() throws {
        var started: [any Service] = []
        for station in stations {
            for part in [station, station.pushService] as [any Service] {
                do {
                    try part.start()
                } catch {
                    for done in started.reversed() { _ = done.stop(timeout: 5) }
                    throw error
                }
                started.append(part)
            }
        }
    }

    func stop(timeout: Double) -> Bool {
        var clean = true
        for station in stations.reversed() where !station.stop(timeout: timeout) { clean = false }
        return clean
    }
}

/// The access log as a service of the server's group: it opens its file (if the configuration names one) when the
/// group starts, and at the stop gives the lines still queued at most its timeout.
final class AccessLogService: Service {
    let name = "access log"
    let log: AccessLog
    let path: String?

    init(log: AccessLog, path: String?) {
        self.log = log
        self.path = path
    }

    func start() throws {
        // Opened by the log's own thread: a FIFO without a reader or a hung disk cannot hold the start-up.
        if let path { log.open(path: path) }
    }

    /// The lines still queued (those of the listeners the stop closed) get at most a second.
    func stop(timeout: Double) -> Bool {
        log.stop(timeout: min(timeout, 1))
        return true
    }
}
