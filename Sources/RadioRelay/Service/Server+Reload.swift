import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// SIGHUP: the configuration file read again and applied to the running stations (see `ReloadPlan`). A file that
/// does not parse changes nothing: its errors are logged and every station goes on.
extension Server {
    func reloadConfiguration() {
        // The access log's file again, whatever else the reload does (logrotate moved the old one away).
        AccessLog.shared.reopen()
        guard let reload else {
            Log.notice("SIGHUP: the stations did not come from a config file (--config); nothing to reload")
            return
        }
        notifier.reloading()
        defer { notifier.ready(status: statusLine()) }
        let file: ConfigFile
        do {
            file = try reload()
        } catch let error as ConfigFileError {
            for message in error.messages { Log.error("reload: \(message)") }
            Log.error("reload: the configuration has errors; every station goes on as it was")
            return
        } catch {
            Log.error("reload: \(error); every station goes on as it was")
            return
        }
        Log.threshold = logLevelOverride ?? file.server.logLevel
        if file.server.accessLog != AccessLog.shared.path {
            Log.warning(
                "reload: [server] access_log = \(file.server.accessLog ?? "none") takes a restart; the access log "
                    + "stays \(AccessLog.shared.path ?? "off") until then")
        }
        let running = http.map { ConfigFile.ListenAddress(host: $0.address.host, port: Int($0.address.port)) }
        if file.server.http != running {
            Log.warning(
                "reload: [server] http = \(file.server.http?.description ?? "off") takes a restart; HTTP listeners "
                    + "stay on \(running?.description ?? "off") until then")
        }
        if let http, http.proxyProtocol.load(ordering: .relaxed) != file.server.httpProxyProtocol {
            http.setProxyProtocol(file.server.httpProxyProtocol)
            Log.notice(
                "reload: http_proxy_protocol = \(file.server.httpProxyProtocol ? "yes" : "no") for new connections")
        }
        if let status, status.access != file.server.statusAccess {
            status.setAccess(file.server.statusAccess)
            Log.notice("reload: status_token and status_hosts for new requests")
        }
        if let http, http.trustedProxies != file.server.httpProxyFrom ?? .loopback {
            http.setTrustedProxies(file.server.httpProxyFrom ?? .loopback)
            Log.notice("reload: http_proxy_from = \(file.server.httpProxyFrom ?? .loopback) for new connections")
        }
        let plan = ReloadPlan(running: stations.map(\.configuration), new: file.stations) { configuration in
            stations.first { $0.name == configuration.name }?.canUpdate(to: configuration) ?? false
        }
        for name in plan.stop {
            stations.first { $0.name == name }?.stop(timeout: 5)
            stations.removeAll { $0.name == name }
        }
        for configuration in plan.update {
            do {
                try stations.first { $0.name == configuration.name }?.update(configuration)
            } catch {
                Log.error("reload: station \(configuration.name): \(error)")
            }
        }
        var failed: [String] = []
        for configuration in plan.restart where !restartStation(configuration) { failed.append(configuration.name) }
        for configuration in plan.start where !startStation(configuration) { failed.append(configuration.name) }
        // What happened, not what was planned: a station that could not (re)start is named as such.
        Log.notice("reload: \(plan.summary(failed: failed))")
    }

    /// A new station; one that cannot start (its port taken) is logged and left out. Returns whether it runs.
    private func startStation(_ configuration: StationConfiguration) -> Bool {
        do {
            let station = try Station(configuration)
            try station.start()
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
            successor = try Station(configuration, adoptedSocket: sockets.main, renditionSockets: sockets.renditions)
        } catch {
            Log.error("reload: station \(configuration.name) cannot restart: \(error); it goes on as it was")
            return false
        }
        old.stop(timeout: 5)
        stations[index] = successor
        do {
            try successor.start()
        } catch {
            stations.remove(at: index)
            Log.error("reload: station \(configuration.name) stopped: its successor cannot start: \(error)")
            return false
        }
        Log.notice("reload: restarted \(configuration.name) on its listening sockets")
        logRelays(successor)
        return true
    }

    private func logRelays(_ station: Station) {
        Log.notice(
            "\(station.name): relays \(Redaction.text(station.configuration.upstream)) on \(station.listenAddress)")
    }
}
