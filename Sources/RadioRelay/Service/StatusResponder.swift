import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The status endpoint's answers (`StatusLoop` in Net runs its connections): what `StatusRouter` decides for each
/// request, and, each time the loop comes round (at least four times a second), each station's liveness judged
/// from its heartbeats — one `Watchdog` per station, so `/health` answers from what the loop saw, not from one look;
/// an operator's command goes to its station's queue, and the loop answers once the station did.
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

    func answer(_ head: HTTPRequestHead.Result) -> StatusAnswer {
        StatusRouter.answer(
            head, access: server.access, snapshot: { server.snapshot(alive: alive, now: monotonicNow()) },
            listing: { snapshot in server.roster.map { snapshot.list($0) } },
            dispatch: { Self.dispatch($0, to: server.stations) }
        ).bytes
    }

    /// Sends an operator's command to its station (by name; `killsource` also by one of its source paths).
    static func dispatch(
        _ wanted: StatusRouter.StationRequest, to stations: [Station]
    ) -> Result<CommandTicket, ConfigurationError> {
        let station = stations.first {
            $0.name == wanted.station
                || (wanted.command == .killSource && $0.configuration.sourcePaths.contains(wanted.station))
        }
        guard let station else {
            return .failure(ConfigurationError("no station \(Sanitized.text(wanted.station, limit: 64))"))
        }
        do {
            return .success(try station.submit(wanted.command))
        } catch {
            return .failure(error)
        }
    }
}

@available(*, unavailable) extension StationStatusResponder: Sendable {}
