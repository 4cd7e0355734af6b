import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `radio-relay report [--csv|--json] [--min-seconds N] [--station-of MOUNT=STATION]… ACCESS_LOG…`, read into a
/// `ReportCommand`.
extension Command {
    static func report(_ rest: ArraySlice<String>) throws(UsageError) -> Command {
        // `--csv` and `--json` are switches without a value (before `--` only: after it, every word is a file).
        var switches: Set<String> = []
        var arguments: [String] = []
        var ended = false
        for argument in rest {
            if argument == "--" { ended = true }
            if !ended && (argument == "--csv" || argument == "--json") {
                switches.insert(argument)
            } else {
                arguments.append(argument)
            }
        }
        let scanner = try ArgumentScanner(arguments[...], options: OptionSpecification.report, topic: .report)
        if scanner.wantsHelp { return .help(.report) }
        var command = ReportCommand()
        guard switches.count < 2 else { throw scanner.error("--csv and --json: choose one") }
        if switches.contains("--csv") { command.format = .csv }
        if switches.contains("--json") { command.format = .json }
        if let seconds = try scanner.value("min-seconds", Values.integer(0...86_400)) {
            command.options.minSeconds = Int64(seconds)
        }
        for pair in scanner.allValues["station-of", default: []] {
            guard let equals = pair.firstIndex(of: "=") else {
                throw scanner.error("--station-of \(pair): use MOUNT=STATION, e.g. /jazz.opus=jazz")
            }
            let mount = String(pair[..<equals])
            let station = String(pair[pair.index(after: equals)...])
            guard mount.hasPrefix("/"), mount.utf8.count <= 1024, !mount.contains(" ") else {
                throw scanner.error("--station-of \(pair): the mount is a path, e.g. /jazz.opus or /jazz/ (HLS)")
            }
            guard StationNames.isValid(station) else {
                throw scanner.error("--station-of \(pair): the station is \(StationNames.rule)")
            }
            guard command.options.stations[mount] == nil else {
                throw scanner.error("--station-of \(mount) is given twice")
            }
            command.options.stations[mount] = station
        }
        guard !scanner.positional.isEmpty else {
            throw scanner.error("report needs at least 1 ACCESS_LOG (a path, or - for standard input)")
        }
        command.files = scanner.positional
        return .report(command)
    }
}
