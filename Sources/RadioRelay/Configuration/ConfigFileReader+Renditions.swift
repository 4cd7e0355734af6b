import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `[rendition STATION/NAME]`: another output of a station in the file, read over the station's own settings, so
/// that every key it leaves out is the station's.
extension ConfigFileReader {
    /// The keys a rendition takes: its encoding, its listening side and its mount (`port` required).
    static let renditionKeys: Set = [
        "port", "bind", "bitrate", "channels", "complexity", "page_ms", "flush_ms", "flush_hold_ms", "burst", "max_lag",
        "max_listeners", "max_per_ip", "mount",
    ]

    /// Adds each rendition section to its station in `placed`. A rendition of a station that had errors is only
    /// checked for its own keys (the station's errors are already reported).
    /// - Parameter stationLines: the header line of every station section, by name.
    mutating func readRenditions(
        _ lines: ConfigFileLines, into placed: inout [PlacedStation], stationLines: [String: Int]
    ) {
        let options = OptionSpecification.stationSettings.filter { Self.renditionKeys.contains($0.key) }
        var firstLines: [String: Int] = [:]
        for section in lines.sections {
            guard case .rendition(let stationName, let name, let validName) = section.header else { continue }
            let label = "\(stationName)/\(name)"
            let index = placed.firstIndex { $0.station.name == stationName }
            var settings = index.map { placed[$0].station } ?? StationConfiguration()
            var (clean, seen) = readKeys(section, options, label: "[rendition \(label)]", into: &settings)
            if seen["port"] == nil {
                problems.add(
                    section.line,
                    "[rendition \(label)] has no port: add port = \(Port.accepts) or none (each output has its own)")
                clean = false
            }
            guard validName else { continue }
            if let first = firstLines[label] {
                problems.add(section.line, "duplicate rendition \(label) (the first is at line \(first)): rename one")
                continue
            }
            firstLines[label] = section.line
            guard stationLines[stationName] != nil else {
                problems.add(section.line, "rendition \(label): no [station \(stationName)] in the file: add it")
                continue
            }
            guard clean, let index else { continue }
            var rendition = RenditionConfiguration(name: name)
            rendition.encoder = settings.encoder
            rendition.encoder.serial = EncoderConfiguration().serial  // its own Ogg stream serial
            rendition.broadcaster = settings.broadcaster
            rendition.mount = seen["mount"] == nil ? nil : settings.mount
            var station = placed[index].station
            station.renditions.append(rendition)
            do {
                try station.validateOutputs()
                try station.validateProtection()
            } catch {
                problems.add(section.line, "\(error)")
                continue
            }
            placed[index].station = station
            placed[index].addressLines.append(seen["port"] ?? section.line)
            placed[index].mountLines.append(seen["mount"] ?? section.line)
        }
    }

    /// No two outputs in the file may share a mount: the HTTP front end serves all stations on one address.
    mutating func checkMounts(_ stations: [PlacedStation]) {
        var taken: [String: (what: String, line: Int)] = [:]
        var directories: [String: (what: String, line: Int)] = [:]
        for placed in stations {
            let station = placed.station
            let outputs = station.outputSettings
            for (index, output) in outputs.enumerated() where index < placed.mountLines.count {
                let what = StationConfiguration.describe(output, of: station.name)
                let line = placed.mountLines[index]
                let directory = PublicDirectory.directory(forMount: "/" + output.mount)
                if let other = taken[output.mount] {
                    problems.add(
                        line,
                        "\(what): mount \(output.mount) is also \(other.what)'s (line \(other.line)): give each "
                            + "output its own mount")
                } else if let other = directories[directory] {
                    // `/NAME.opus` and `/NAME` would share `/NAME/` for their events and HLS streams.
                    problems.add(
                        line,
                        "\(what): mount \(output.mount) has its events and HLS at \(directory), as \(other.what)'s "
                            + "mount does (line \(other.line)): give each output its own name (a final .opus is "
                            + "dropped there)")
                } else {
                    taken[output.mount] = (what, line)
                    directories[directory] = (what, line)
                }
            }
        }
    }
}
