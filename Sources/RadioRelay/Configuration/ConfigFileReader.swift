import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Gives a config file's sections their meaning and collects every problem on the way: keys are looked up in the
/// command line's option table, values read with its readers (`OptionSpecification.setting`), so a key accepts
/// what its flag accepts and is refused with the flag's own "use …" words.
struct ConfigFileReader {
    var problems: ConfigFileProblems
    let credentialsDirectory: String?

    init(file: String, credentialsDirectory: String?) {
        problems = ConfigFileProblems(file: file)
        self.credentialsDirectory = credentialsDirectory
    }

    /// A station that passed every check, with the lines its outputs' addresses and mounts come from (the main
    /// output first, then each rendition).
    struct PlacedStation {
        var station: StationConfiguration
        var addressLines: [Int]
        var mountLines: [Int]
        /// The lines of the station's `mp3` key and of its MP3 output's address (its `mp3_port`, else the same).
        var mp3Lines = (mount: 0, address: 0)
    }

    mutating func read(_ text: String) throws(ConfigFileError) -> ServerConfiguration {
        let lines = ConfigFileLines(text, problems: &problems)
        let fileLines = lines
        var result = ServerConfiguration()
        var serverLine: Int?
        var statusLine: Int?
        var httpLine: Int?
        for section in lines.sections where section.header == .server {
            if let first = serverLine {
                problems.add(section.line, "a second [server] section (the first is at line \(first)): keep one")
                var ignored = ServerSettings()
                _ = readServer(section, into: &ignored)
            } else {
                serverLine = section.line
                (statusLine, httpLine) = readServer(section, into: &result.server)
            }
        }
        // DJ accounts first: a station they name takes live sources (and needs no upstream).
        let stationNames = Set(
            lines.sections.compactMap { section -> String? in
                guard case .station(let name, true) = section.header else { return nil }
                return name
            })
        let (accounts, djStations) = readAccounts(
            lines, stationNames: stationNames, adminUser: result.server.adminUser)
        result.accounts = accounts
        var placed: [PlacedStation] = []
        var firstLines: [String: Int] = [:]
        var sawStation = false
        for section in lines.sections {
            guard case .station(let name, let validName) = section.header else { continue }
            sawStation = true
            var station = result.server.stationDefaults
            station.name = name
            station.liveAccounts = djStations.contains(name)
            station.encoder.serial = EncoderConfiguration().serial  // its own Ogg stream serial, not the template's
            var (clean, lines) = readStation(section, into: &station)
            clean = readInputs(fileLines, section, into: &station) && clean
            guard validName else { continue }
            if let first = firstLines[name] {
                problems.add(section.line, "duplicate station \(name) (the first is at line \(first)): rename one")
                continue
            }
            firstLines[name] = section.line
            guard clean else { continue }
            do {
                try station.validate()
            } catch {
                let message = "\(error)"
                problems.add(
                    section.line, message.hasPrefix("station \(name):") ? message : "station \(name): \(message)")
                continue
            }
            placed.append(
                PlacedStation(
                    station: station, addressLines: [lines.address], mountLines: [lines.mount],
                    mp3Lines: (lines.mp3, lines.mp3Address)))
        }
        if !sawStation {
            problems.addToFile("no [station NAME] section: add one per station, each with upstream = URL or path")
        }
        readRenditions(lines, into: &placed, stationLines: firstLines)
        checkInputStations(lines, stationLines: firstLines)
        // The MP3 output is the last: its mount is checked; its address only when it is a port of its own.
        for index in placed.indices where placed[index].station.mp3 {
            let lines = placed[index].mp3Lines
            placed[index].mountLines.append(lines.mount)
            if placed[index].station.mp3Port != 0 { placed[index].addressLines.append(lines.address) }
        }
        checkAddresses(placed, status: result.server.status, statusLine: statusLine)
        checkHTTP(placed, server: result.server, httpLine: httpLine, statusLine: statusLine)
        checkMounts(placed)
        for (index, problem) in ServerConfiguration.sourceProblems(
            server: result.server, stations: placed.map(\.station))
        {
            problems.add(placed[index].mountLines.first ?? 0, problem)
        }
        for (index, problem) in ServerConfiguration.overflowProblems(
            server: result.server, stations: placed.map(\.station))
        {
            problems.add(placed[index].mountLines.first ?? 0, problem)
        }
        guard problems.isEmpty else { throw problems.error }
        result.stations = placed.map(\.station)
        return result
    }

    /// Reads `[server]`: the table's server options and the station settings every station inherits
    /// (`isServerDefault`); returns the lines of its `status` and `http` keys.
    private mutating func readServer(_ section: ConfigFileLines.Section, into server: inout ServerSettings)
        -> (status: Int?, http: Int?)
    {
        let options = OptionSpecification.serverOptions
        let defaults = OptionSpecification.stationSettings.filter(\.isServerDefault)
        let keys = options.map(\.key) + defaults.map(\.key)
        var seen: [String: Int] = [:]
        for entry in section.entries where firstTime(entry, &seen) {
            guard let value = entry.value else { continue }
            if let option = options.first(where: { $0.key == entry.key }) {
                if !applyServer(value, line: entry.line, option, to: &server)
                    && entry.key == OptionSpecification.status.key
                {
                    server.status = nil  // unknown, so no station is said to overlap it
                }
            } else if let option = defaults.first(where: { $0.key == entry.key }) {
                _ = apply(entry.key, value, line: entry.line, option, to: &server.stationDefaults)
            } else {
                problems.add(entry.line, Self.unknownKey(entry.key, in: "[server]", keys: keys))
            }
        }
        return (seen[OptionSpecification.status.key], seen[OptionSpecification.http.key])
    }

    /// Sets one `[server]` key, reading `@credential:NAME` first where the key allows it.
    private mutating func applyServer(
        _ value: String, line: Int, _ option: OptionSpecification, to server: inout ServerSettings
    ) -> Bool {
        guard let setting = option.serverSetting else { return false }
        let section = OptionSpecification.serverOptions + OptionSpecification.stationSettings.filter(\.isServerDefault)
        return set(option.key, value, line: line, option, among: section) { setting($0, &server) } != nil
    }

    /// The text of a key's value (`@credential:NAME` read first where the key allows it) once `store` took it; nil,
    /// with a problem at `line`, when it is empty, cannot come from a credential, or is not a value the option takes.
    /// Messages quote the file (`@credential:NAME`) or the value redacted (`Redaction`), never a secret.
    mutating func set(
        _ key: String, _ value: String, line: Int, _ option: OptionSpecification,
        among section: [OptionSpecification], _ store: (String) -> Bool
    ) -> String? {
        if Credentials.reference(in: value) != nil && !option.acceptsCredential {
            let keys = section.filter(\.acceptsCredential).map(\.key)
            problems.add(line, "\(key) cannot come from a credential: only \(Self.list(keys)) can")
            return nil
        }
        guard let text = credential(value, line: line) else { return nil }
        guard hasValue(key, value, line: line, accepts: option.accepts), store(text) else {
            if !value.isEmpty { problems.add(line, "\(key) = \(option.complaint(about: text, as: value))") }
            return nil
        }
        return text
    }

    /// Reads a station's keys over `station`; returns whether all were good, and the lines
    /// its listening address comes from (`port`, else `bind`, else the section's header) and its mount.
    private mutating func readStation(_ section: ConfigFileLines.Section, into station: inout StationConfiguration)
        -> (clean: Bool, lines: (address: Int, mount: Int, mp3: Int, mp3Address: Int))
    {
        let label = station.name.isEmpty ? "[station]" : "[station \(station.name)]"
        let (clean, seen) = readKeys(section, OptionSpecification.stationSettings, label: label, into: &station)
        return (
            clean,
            (
                seen["port"] ?? seen["bind"] ?? section.line, seen["mount"] ?? section.line,
                seen["mp3"] ?? section.line, seen["mp3_port"] ?? seen["mp3"] ?? section.line
            )
        )
    }

    /// Reads a section's keys, each one of `options`, over `station`; returns whether all were good and the line of
    /// each key seen.
    mutating func readKeys(
        _ section: ConfigFileLines.Section, _ options: [OptionSpecification], label: String,
        into station: inout StationConfiguration
    ) -> (clean: Bool, seen: [String: Int]) {
        var seen: [String: Int] = [:]
        var clean = true
        var pushLines: [Int] = []
        for entry in section.entries {
            let repeatable = options.contains { $0.key == entry.key && $0.isRepeatable }
            if repeatable && seen[entry.key] == nil { seen[entry.key] = entry.line }
            guard repeatable || firstTime(entry, &seen) else {
                clean = false
                continue
            }
            guard let option = options.first(where: { $0.key == entry.key }) else {
                problems.add(entry.line, Self.unknownKey(entry.key, in: label, keys: options.map(\.key)))
                clean = false
                continue
            }
            guard let value = entry.value else {
                clean = false
                continue
            }
            let pushes = station.pushes.count
            clean = apply(entry.key, value, line: entry.line, option, to: &station) && clean
            if station.pushes.count > pushes {
                clean = checkPush(station.pushes, line: entry.line, &pushLines) && clean
            }
        }
        return (clean, seen)
    }

    /// `value`, or the secret it names (`@credential:NAME`, from the credentials directory); nil, with a problem at
    /// `line`, when the credential cannot be read.
    private mutating func credential(_ value: String, line: Int) -> String? {
        guard let name = Credentials.reference(in: value) else { return value }
        switch Credentials.read(name, directory: credentialsDirectory) {
        case .success(let secret): return secret
        case .failure(let problem):
            problems.add(line, problem.message)
            return nil
        }
    }

    /// Sets one station key, reading `@credential:NAME` first where the key allows it.
    private mutating func apply(
        _ key: String, _ value: String, line: Int, _ option: OptionSpecification,
        to station: inout StationConfiguration
    ) -> Bool {
        guard let setting = option.setting,
            let text = set(
                key, value, line: line, option, among: OptionSpecification.stationSettings, { setting($0, &station) })
        else { return false }
        if option.name == "upstream" {
            do {
                _ = try UpstreamURL.classify(text)
            } catch {
                problems.add(line, "\(key) = \(Redaction.text(value)): \(error.message)")
                return false
            }
        }
        return true
    }

    /// False, with a problem, when the push just added (the last of `pushes`, from `line`) goes to a mount an
    /// earlier one already does: Icecast takes one source per mount.
}
