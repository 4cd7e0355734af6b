import Synchronization

/// SIGHUP: the configuration file read again and applied to the running stations (see `ReloadPlan`). A file that
/// does not parse changes nothing: its errors are logged and every station goes on.
extension Server {
    func reloadConfiguration() {
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
        for configuration in plan.restart {
            stations.first { $0.name == configuration.name }?.stop(timeout: 5)
            stations.removeAll { $0.name == configuration.name }
            startStation(configuration)
        }
        for configuration in plan.start { startStation(configuration) }
        Log.notice("reload: \(plan.summary)")
    }

    /// A new or restarted station; one that cannot start (its port taken) is logged and left out.
    private func startStation(_ configuration: StationConfiguration) {
        do {
            let station = try Station(configuration)
            try station.start()
            stations.append(station)
            Log.notice(
                "\(configuration.name): relays \(Credentials.redacted(configuration.upstream)) on "
                    + "\(station.listenAddress)")
        } catch {
            Log.error("reload: station \(configuration.name) cannot start: \(error)")
        }
    }
}
