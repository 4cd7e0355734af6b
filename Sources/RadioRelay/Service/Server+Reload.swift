import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// SIGHUP: the configuration read again and applied as a `ReloadPlan` over the whole of it — each changed server key
/// in place or, if only a process restart can apply it, logged by name; each station kept, updated, restarted,
/// started or stopped. A configuration that does not parse changes nothing: its errors are logged and every station
/// goes on. Every SIGHUP also opens the access log's file again (logrotate moved it).
extension Server {
    func reloadConfiguration() {
        accessLog.reopen()
        guard let reload else {
            Log.notice("SIGHUP: the stations did not come from a config file (--config); nothing to reload")
            return
        }
        notifier.reloading()
        defer { notifier.ready(status: statusLine()) }
        let new: ServerConfiguration
        do {
            new = try reload()
        } catch let error as ConfigFileError {
            for message in error.messages { Log.error("reload: \(message)") }
            Log.error("reload: the configuration has errors; every station goes on as it was")
            return
        } catch {
            Log.error("reload: \(error); every station goes on as it was")
            return
        }
        let plan = ReloadPlan(running: configuration, new: new) { station in
            stations.first { $0.name == station.name }?.ringsHold(station) ?? false
        }
        applyServerChanges(plan, new: new.server)
        for name in plan.stop {
            stations.first { $0.name == name }?.stop(timeout: 5)
            stations.removeAll { $0.name == name }
        }
        var failed: [String] = []
        for station in plan.update {
            do {
                try stations.first { $0.name == station.name }?.update(station)
            } catch {
                Log.error("reload: station \(station.name): \(error); it goes on as it was")
                failed.append(station.name)
            }
        }
        for station in plan.restart {
            let keys = plan.restartKeys[station.name] ?? []
            Log.notice(
                "reload: station \(station.name) restarts for \(keys.joined(separator: ", ")) (its listeners are closed)"
            )
            if !restartStation(station) { failed.append(station.name) }
        }
        for station in plan.start where !startStation(station) { failed.append(station.name) }
        configuration.stations = stations.map(\.configuration)
        applyAccounts(new.accounts)
        admission.setPolicy(Self.policy(configuration.stations))
        // What happened, not what was planned: a station that could not (re)start is named as such.
        Log.notice("reload: \(plan.summary(failed: failed))")
    }

    /// The server's keys: those that apply in place are applied (and become the running configuration's), those
    /// that take a restart of the process are logged by name and keep their running value.
    private func applyServerChanges(_ plan: ReloadPlan, new: ServerSettings) {
        var running = configuration.server
        for change in plan.server where change.rule == .inPlace {
            // The option's own entry copies its value (`ReloadRuleTests`: every in-place key has one).
            guard case .server(_, _, _, let adopt)? = OptionSpecification.serverOption(key: change.key)?.target else {
                continue
            }
            adopt(&running, new)
            Log.notice("reload: [server] \(change.key) = \(change.new) (was \(change.running)), in place")
        }
        // What runs takes the settings now in force (each setter replaces a value: the same one again is no change).
        http?.setProxyProtocol(running.httpProxyProtocol)
        http?.setTrustedProxies(running.httpProxyFrom ?? .loopback)
        http?.setForwarding(running.forwarding)
        http?.setPublicURL(running.publicURL)
        http?.setAdmin(running.admin)
        status?.setAccess(running.statusGate)
        for line in plan.processRestarts { Log.warning(line) }
        Log.threshold = logLevelOverride ?? running.logLevel
        running.stationDefaults = new.stationDefaults
        configuration.server = running
    }

    /// The services a new station runs with: the server's loops, listener places and access log.
    private var services: ListenerServices {
        ListenerServices(pool: pool, budget: budget, accessLog: accessLog, admission: admission)
    }

    /// A new station; one that cannot start (its port taken) is logged and left out. Returns whether it runs.
    private func startStation(_ configuration: StationConfiguration) -> Bool {
        do {
            let station = try Station(configuration, services: services, onUnexpectedExit: onUnexpectedExit)
            try station.start()
            try station.pushService.start()
            stations.append(station)
            logRelays(station)
            return true
        } catch {
            Log.error("reload: station \(configuration.name) cannot start: \(error)")
            return false
        }
    }

    /// A running station replaced by one made from `configuration`, which takes over its listening sockets (no
    /// moment without a listening port). The successor is made before the old one stops: if it cannot be made,
    /// the old one goes on as it was. Returns whether the successor runs.
    private func restartStation(_ configuration: StationConfiguration) -> Bool {
        guard let index = stations.firstIndex(where: { $0.name == configuration.name }) else {
            return startStation(configuration)
        }
        let old = stations[index]
        let successor: Station
        do {
            let sockets = try old.listeningSockets(for: configuration)
            successor = try Station(
                configuration, services: services, adoptedSocket: sockets.main, renditionSockets: sockets.renditions,
                history: old.history.snapshot, onUnexpectedExit: onUnexpectedExit)
        } catch {
            Log.error("reload: station \(configuration.name) cannot restart: \(error); it goes on as it was")
            return false
        }
        let closed = old.listeners
        old.stop(timeout: 5)
        stations[index] = successor
        do {
            try successor.start()
            try successor.pushService.start()
        } catch {
            successor.stop(timeout: 5)
            stations.remove(at: index)
            Log.error("reload: station \(configuration.name) stopped: its successor cannot start: \(error)")
            return false
        }
        Log.notice(
            "reload: restarted \(configuration.name) on its listening sockets: its \(closed) listener"
                + "\(closed == 1 ? "" : "s") closed (an output's stream or address changed)")
        logRelays(successor)
        return true
    }

    private func logRelays(_ station: Station) {
        Log.notice(
            "\(station.name): relays \(station.configuration.inputsShown) on \(station.listenAddress)")
    }
}

extension Server {
    /// The admission policy the stations' settings make: each station's access lists (`allow`, `deny`,
    /// `deny_agents`, the countries), `overflow` URLs and listener authentication, by name.
    static func policy(_ stations: [StationConfiguration]) -> AdmissionPolicy {
        var access: [String: AccessList] = [:]
        var overflow: [String: [String]] = [:]
        var authentication: [String: ListenerAuthentication] = [:]
        for station in stations {
            if !station.access.isEmpty { access[station.name] = station.access }
            if !station.overflow.isEmpty { overflow[station.name] = station.overflow }
            if station.authentication.isOn { authentication[station.name] = station.authentication }
        }
        return AdmissionPolicy(access: access, overflow: overflow, authentication: authentication)
    }
}
