import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What a reload does to the running stations, decided from the old and new configurations alone (a pure value).
///
/// A station is matched by name. Unchanged: kept as it is (listeners, pipeline and Ogg stream go on, no new headers).
/// Changed: updated in place or restarted (which closes its listeners) as the rules of the keys that changed say
/// (`StationReload`, read from the option table). New names start; missing names stop.
package struct ReloadPlan: Equatable, Sendable {
    /// A `[server]` key whose value changed, with what the reload does about it (its option's rule).
    package struct ServerChange: Equatable, Sendable {
        package var key: String
        package var rule: ReloadRule
        /// The running value and the new one, as a log line quotes them (no secret).
        package var running: String
        package var new: String
    }

    /// The server's keys that changed, in the table's order: `inPlace` ones are applied, `restartsProcess` ones are
    /// logged by name and left as they run.
    package var server: [ServerChange] = []
    package var start: [StationConfiguration] = []
    package var stop: [String] = []
    package var update: [StationConfiguration] = []
    package var restart: [StationConfiguration] = []
    package var keep: [String] = []
    /// Why each station restarts: the keys that changed whose rules say so.
    package var restartKeys: [String: [String]] = [:]

    /// The plan for a whole configuration: the server's keys, then the stations.
    /// - Parameter fits: whether a running station's page rings (by name) hold what a new configuration asks for.
    package init(
        running: ServerConfiguration, new: ServerConfiguration, fits: (StationConfiguration) -> Bool
    ) {
        self.init(running: running.stations, new: new.stations, fits: fits)
        for option in OptionSpecification.serverOptions {
            guard case .server(_, let differs, let shown, _) = option.target, differs(running.server, new.server) else {
                continue
            }
            server.append(
                ServerChange(
                    key: option.key, rule: option.reload ?? .restartsProcess, running: shown(running.server),
                    new: shown(new.server)))
        }
    }

    /// The plan for the stations alone.
    /// - Parameter fits: whether a running station's page rings (by name) hold what a new configuration asks for.
    package init(
        running: [StationConfiguration], new: [StationConfiguration], fits: (StationConfiguration) -> Bool
    ) {
        let old = Dictionary(running.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let names = Set(new.map(\.name))
        for configuration in new {
            guard let current = old[configuration.name] else {
                start.append(configuration)
                continue
            }
            let kept = configuration.keepingSerials(of: current)
            switch StationReload(running: current, new: kept, ringsHold: fits) {
            case .keep: keep.append(kept.name)
            case .update: update.append(kept)
            case .restart(let keys):
                restart.append(kept)
                restartKeys[kept.name] = keys
            }
        }
        stop = running.map(\.name).filter { !names.contains($0) }
    }

    /// The log line for each server key that takes a restart of the process.
    package var processRestarts: [String] {
        server.filter { $0.rule == .restartsProcess }.map {
            "reload: [server] \($0.key) = \($0.new) takes a restart of the process; it stays \($0.running) until then"
        }
    }

    /// One line for the log: what the reload does.
    package var summary: String { summary(failed: []) }

    /// What was done, when the stations named in `failed` could not start or restart: never "restarted" for a
    /// restart that failed.
    package func summary(failed: [String]) -> String {
        func part(_ label: String, _ names: [String]) -> String? {
            let names = label == "failed" ? names : names.filter { !failed.contains($0) }
            return names.isEmpty ? nil : "\(label) \(names.joined(separator: ", "))"
        }
        let parts = [
            part("started", start.map(\.name)), part("stopped", stop), part("updated", update.map(\.name)),
            part("restarted", restart.map(\.name)), part("unchanged", keep), part("failed", failed),
        ].compactMap { $0 }
        return parts.isEmpty ? "no stations" : parts.joined(separator: "; ")
    }
}
