import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// A reload's changes to a running station: what it takes in place (`canUpdate`), applying them (`update`), and the
/// Encoders of renditions it added, handed to the pipeline.
extension Station {
    /// Whether `new` can replace this station's settings while it runs: what the rules of the keys that changed say
    /// (`StationReload`), with this station's page rings for a lag or burst (`ringsHold`).
    package func canUpdate(to new: StationConfiguration) -> Bool {
        switch StationReload(running: configuration, new: new, ringsHold: ringsHold) {
        case .keep, .update: return true
        case .restart: return false
        }
    }

    /// Whether every output that `new` keeps has a page ring large enough for the lag and burst it asks for.
    package func ringsHold(_ new: StationConfiguration) -> Bool {
        let current = outputs
        for now in new.outputSettings {
            guard let output = current.first(where: { $0.name == now.name }) else { continue }  // a new rendition
            guard Self.ringPages(now) <= output.broadcaster.ring.capacity else { return false }
        }
        return true
    }

    /// Applies `new` to the running station (see `canUpdate`): listeners, pipeline and Ogg streams go on; a new
    /// upstream is connected to at once; a rendition added is made (its Encoder's header pages in its ring before
    /// its port takes a listener) and started, one removed is stopped (its listeners, counted in the log, closed).
    package func update(_ new: StationConfiguration) throws {
        guard canUpdate(to: new) else {
            throw ConfigurationError("station \(name): this change needs a restart of the station")
        }
        try new.validate()
        let current = outputs
        var made: [StationOutput] = []
        var encoders: [String: Handoff<Encoder>] = [:]
        do {
            for wanted in new.outputSettings where !current.contains(where: { $0.name == wanted.name }) {
                let output = try Self.makeOutput(
                    wanted, of: new, socket: nil, services: services, onUnexpectedExit: onUnexpectedExit)
                var settings = wanted.encoder
                settings.inputRate = new.commonRate
                let encoder = try Encoder(settings)
                output.broadcaster.ring.setHeaders(encoder.headerPages)
                output.hls?.setHeaders(encoder.headerPages)
                if pipeline.snapshot != nil { try output.broadcaster.start() }
                made.append(output)
                encoders[output.label] = Handoff(value: encoder)
            }
        } catch {
            for output in made { _ = output.broadcaster.stop(timeout: 5) }
            throw error
        }
        // `archive_keep` in place: the writers apply it at their next look (within a second).
        for writer in archives { writer.keep.withLock { $0 = new.archive.keep } }
        // The station's `max_listeners`, for the listeners who come next.
        services.audience?.limit.store(max(0, new.broadcaster.maxListeners), ordering: .relaxed)
        for output in current {
            guard let wanted = new.outputSettings.first(where: { $0.name == output.name }) else { continue }
            try output.broadcaster.update(wanted.broadcaster)
            output.encoderSettings.withLock { $0 = wanted.encoder }
        }
        let outputs = new.outputSettings.compactMap { wanted in
            current.first { $0.name == wanted.name } ?? made.first { $0.name == wanted.name }
        }
        let removed = current.filter { output in !outputs.contains { $0.name == output.name } }
        arrivingEncoders.withLock { $0.merge(encoders) { $1 } }
        outputList.withLock { $0 = outputs }
        settings.withLock { $0 = new }
        desk.update(
            password: new.sourcePassword, accounts: new.liveAccounts, paths: new.sourcePaths, timeout: new.sourceTimeout
        )
        settingsVersion.add(1, ordering: .releasing)
        for output in made {
            Log.notice("\(name): rendition \(output.label) added on \(output.broadcaster.shownAddress)")
        }
        for output in removed {
            let listeners = output.broadcaster.counters.listeners.load(ordering: .relaxed)
            _ = output.broadcaster.stop(timeout: 5)
            Log.notice(
                "\(name): rendition \(output.label) removed: its \(listeners) listener\(listeners == 1 ? "" : "s") "
                    + "closed; the station's other outputs go on")
        }
        if pipeline.snapshot != nil { try updatePushes(to: new) }
    }

    /// The Encoders of renditions a reload added, by label (the pipeline's, once).
    func takeArrivingEncoders() -> [String: Encoder] {
        arrivingEncoders.withLock { arriving in
            defer { arriving.removeAll() }
            return arriving.mapValues(\.value)
        }
    }
}
