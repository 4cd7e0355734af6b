import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `[input STATION/NAME]`: one more input of a station in the file, after its `upstream` values in priority, read
/// over the station's own settings (so a key it leaves out — its pace, its timeouts, its title — is the station's).
extension ConfigFileReader {
    /// The options an input takes (the table's with an `input` field): its URL (required), its title, and how it is
    /// read.
    static var inputOptions: [OptionSpecification] { OptionSpecification.stationSettings.filter { $0.input != nil } }

    /// Adds station `station`'s input sections to `station.namedInputs`, in the file's order, then checks the whole
    /// list: at least one input, all of one kind (the line of the first that differs). Returns whether all was good.
    /// - Parameter line: the station section's header line.
    mutating func readInputs(
        _ lines: ConfigFileLines, _ stationSection: ConfigFileLines.Section, into station: inout StationConfiguration
    ) -> Bool {
        var clean = true
        var inputLines = stationSection.entries.filter { $0.key == "upstream" }.map(\.line)
        let options = Self.inputOptions
        var firstLines: [String: Int] = [:]
        var hadInputSection = false
        for section in lines.sections {
            guard case .input(let stationName, let name, let validName) = section.header, stationName == station.name
            else { continue }
            hadInputSection = true
            let label = "[input \(stationName)/\(name)]"
            var settings = station
            settings.upstreams = []
            settings.namedInputs = []
            let (good, seen) = readKeys(section, options, label: label, into: &settings)
            clean = clean && good && validName
            if seen["upstream"] == nil {
                problems.add(
                    section.line, "\(label) has no upstream: add upstream = an http(s) URL, a file: URL or a path")
                clean = false
            }
            guard validName else { continue }
            if let first = firstLines[name] {
                problems.add(
                    section.line, "duplicate input \(stationName)/\(name) (the first is at line \(first)): rename one")
                clean = false
                continue
            }
            firstLines[name] = section.line
            guard let url = settings.upstreams.last else { continue }
            if settings.upstreams.count > 1 {
                problems.add(section.line, "\(label) has more than one upstream: give each input its own section")
                clean = false
            }
            var input = InputConfiguration(name: name, upstream: url)
            for option in options { option.input?(settings, &input) }
            input.titleIsOwn = seen["title"] != nil
            station.namedInputs.append(input)
            inputLines.append(seen["upstream"] ?? section.line)
        }
        // The live source's input (source_password) is no URL of its own: the lines below are the others'.
        let inputs = station.inputs.filter { !$0.isLive }
        guard let first = inputs.first else {
            if station.takesLiveSources { return clean }  // a live-only station
            // An upstream written but refused (its error is reported at its line) is not a missing one.
            if inputLines.isEmpty && !hadInputSection {
                problems.add(
                    stationSection.line,
                    "[station \(station.name)] has no upstream: add upstream = an http(s) URL, a file: URL or a path")
            }
            return false
        }
        if let index = inputs.firstIndex(where: { StationConfiguration.kindMismatch(first, $0) != nil }),
            let mismatch = StationConfiguration.kindMismatch(first, inputs[index])
        {
            problems.add(inputLines.indices.contains(index) ? inputLines[index] : stationSection.line, mismatch)
            clean = false
        }
        return clean
    }

    /// Input sections of stations the file does not have.
    mutating func checkInputStations(_ lines: ConfigFileLines, stationLines: [String: Int]) {
        for section in lines.sections {
            guard case .input(let stationName, let name, true) = section.header, stationLines[stationName] == nil
            else { continue }
            problems.add(section.line, "input \(stationName)/\(name): no [station \(stationName)] in the file: add it")
        }
    }
}
