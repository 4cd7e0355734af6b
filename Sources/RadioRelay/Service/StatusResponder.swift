import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The status endpoint's answers (`StatusLoop` in Net runs its connections): what `StatusRouter` decides for each
/// request, and, each time the loop comes round (at least four times a second), each station's liveness judged
/// from its heartbeats — one `Watchdog` per station, so `/health` answers from what the loop saw, not from one look.
/// Confined to the status thread.
final class StationStatusResponder: StatusResponder {
    private let server: StatusServer
    private let limits: StatusServer.Limits
    private var watchdogs: [Watchdog]
    private var alive: [Bool]

    init(server: StatusServer) {
        self.server = server
        limits = server.limits
        var watchdog = Watchdog()
        watchdog.allowance = server.limits.healthAllowance
        watchdogs = Array(repeating: watchdog, count: server.stations.count)
        alive = Array(repeating: true, count: server.stations.count)
    }

    /// The stations' heartbeats, judged. The stations are read here and let go before the loop waits: a station
    /// a reload replaced must not live on in this thread's hands (its ports and threads would outlast it).
    func comeRound(now: Double) {
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

    func answer(_ head: HTTPRequestHead.Result) -> [UInt8] {
        StatusRouter.respond(
            to: head, access: server.access, snapshot: { server.snapshot(alive: alive, now: monotonicNow()) },
            control: control
        ).encoded
    }

    /// Forces or releases a station's input (`Station.force`).
    private func control(_ wanted: StatusRouter.InputControl) -> Result<String, ConfigurationError> {
        if wanted.killsSource {
            guard
                let station = server.stations.first(where: {
                    $0.name == wanted.station || $0.configuration.sourcePaths.contains(wanted.station)
                })
            else { return .failure(ConfigurationError("no station \(Sanitized.text(wanted.station, limit: 64))")) }
            guard station.desk.kill() else {
                return .failure(ConfigurationError("station \(station.name): no live source is on the air"))
            }
            return .success("station \(station.name): the live source is ended: the station hands back")
        }
        guard let station = server.stations.first(where: { $0.name == wanted.station }) else {
            return .failure(ConfigurationError("no station \(Sanitized.text(wanted.station, limit: 64))"))
        }
        do {
            try station.force(input: wanted.input)
        } catch {
            return .failure(error)
        }
        if let input = wanted.input {
            return .success(
                "station \(station.name): input \(input) forced: it plays once it is healthy, until released or until "
                    + "it fails")
        }
        return .success("station \(station.name): the force is released: the rules choose the input again")
    }
}

@available(*, unavailable) extension StationStatusResponder: Sendable {}
