import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What a reload does to the running stations, decided from the old and new configurations alone (a pure value).
///
/// A station is matched by name. Unchanged: kept as it is (listeners, pipeline and Ogg stream go on, no new headers).
/// Changed only in what a running station can take (limits, lag, burst, flush, lead, jitter, reconnect delays, its
/// upstream, and the same of each rendition): updated in place. Changed in the encoding of any output (bitrate,
/// channels, complexity, page duration, rates), in a listening address or mount, in its set of renditions, or in a
/// lag or burst a page ring was not sized for: restarted, which closes its listeners. New names start; missing names
/// stop.
package struct ReloadPlan: Equatable, Sendable {
    package var start: [StationConfiguration] = []
    package var stop: [String] = []
    package var update: [StationConfiguration] = []
    package var restart: [StationConfiguration] = []
    package var keep: [String] = []

    /// - Parameter fits: whether a running station (by name) can take a new configuration in place.
    package init(
        running: [StationConfiguration], new: [StationConfiguration], fits: (StationConfiguration) -> Bool
    ) {
        let old = Dictionary(running.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let names = Set(new.map(\.name))
        for var configuration in new {
            guard let current = old[configuration.name] else {
                start.append(configuration)
                continue
            }
            // A config file gives every station a fresh random serial when it is read: the running stream keeps its
            // own, or no station would ever count as unchanged.
            configuration.encoder.serial = current.encoder.serial
            for index in configuration.renditions.indices {
                let name = configuration.renditions[index].name
                guard let running = current.renditions.first(where: { $0.name == name }) else { continue }
                configuration.renditions[index].encoder.serial = running.encoder.serial
            }
            if current == configuration {
                keep.append(configuration.name)
            } else if fits(configuration) {
                update.append(configuration)
            } else {
                restart.append(configuration)
            }
        }
        stop = running.map(\.name).filter { !names.contains($0) }
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
