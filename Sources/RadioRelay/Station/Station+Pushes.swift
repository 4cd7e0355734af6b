import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// A station's pushes to Icecast: started after the pipeline, stopped before it, and on a reload changed one by one —
/// a push whose settings (`PushSettings`) are unchanged keeps its connection, a removed one is stopped, a new or
/// changed one is started. The station itself goes on either way.
extension Station {
    /// Each push's state, in the configuration's order.
    package var pushStatuses: [PushStatus] { pushes.snapshot.map(\.status) }

    /// Makes the running pushes those of `configuration`.
    func updatePushes(to configuration: StationConfiguration) throws {
        let wanted = configuration.pushes.map { PushSettings(configuration, target: $0) }
        let running = pushes.snapshot
        for push in running where !wanted.contains(push.settings) {
            push.stop(timeout: 5)
            Log.notice("\(name): stopped pushing to \(push.settings.target)")
        }
        let kept = running.filter { wanted.contains($0.settings) }
        var next: [IcecastPush] = []
        for settings in wanted {
            if let push = kept.first(where: { push in push.settings == settings && !next.contains { $0 === push } }) {
                next.append(push)
                continue
            }
            let push = IcecastPush(settings, ring: broadcaster.ring, onUnexpectedExit: onUnexpectedExit)
            do {
                try push.start()
            } catch {
                let others = kept.filter { push in !next.contains { $0 === push } }
                pushes.withLock { $0 = next + others }
                throw error
            }
            next.append(push)
        }
        pushes.withLock { $0 = next }
    }

    /// Stops every push; false if one outlived `timeout`.
    func stopPushes(timeout: Double) -> Bool {
        let running = pushes.withLock { list in
            defer { list = [] }
            return list
        }
        return running.reduce(true) { stopped, push in push.stop(timeout: timeout) && stopped }
    }
}

/// A station's pushes as a service of its server's group, started after the station (the pipeline that fills the
/// ring they read) and stopped before it.
package final class StationPushes: Service {
    private let station: Station
    package var name: String { "pushes of \(station.name)" }

    init(station: Station) { self.station = station }

    package func start() throws {
        try station.updatePushes(to: station.configuration)
    }

    package func stop(timeout: Double) -> Bool {
        station.stopPushes(timeout: timeout)
    }
}
