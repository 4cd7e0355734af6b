import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Gives a config file's sections their meaning and collects every problem on the way: keys are looked up in the
/// command line's option table, values read with its readers (`OptionSpecification.setting`), so a key accepts
/// what its flag accepts and is refused with the flag's own "use …" words.
struct ConfigFileReader {
    var problems: ConfigFileProblems
    let credentialsDirectory: String?

    /// The keys of `[server]` besides the inherited station settings.
    static let statusKey = "status"
    static let statusTokenKey = "status_token"
    static let statusHostsKey = "status_hosts"
    static let statusHostsAccepts = "host names, comma-separated, e.g. relay1.example.org, relay1"

    /// A DNS name: 1 to 253 characters of letters, digits, `-` and `.`, labels of 1 to 63.
    static func isHostName(_ name: some StringProtocol) -> Bool {
        guard (1...253).contains(name.count) else { return false }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.count)
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }
    static let statusAccepts = "ADDR:PORT such as 127.0.0.1:8080 or [::1]:8080, or off"
    static let httpKey = "http"
    static let httpAccepts = "PORT, ADDR:PORT such as 0.0.0.0:8001 or [::]:8001, or off"

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

    mutating func read(_ text: String) throws(ConfigFileError) -> ConfigFile {
        let lines = ConfigFileLines(text, problems: &problems)
        var result = ConfigFile()
        var serverLine: Int?
        var statusLine: Int?
        var httpLine: Int?
        for section in lines.sections where section.header == .server {
            if let first = serverLine {
                problems.add(section.line, "a second [server] section (the first is at line \(first)): keep one")
                var ignored = ConfigFile.ServerSettings()
                _ = readServer(section, into: &ignored)
            } else {
                serverLine = section.line
                (statusLine, httpLine) = readServer(section, into: &result.server)
            }
        }
        var placed: [PlacedStation] = []
        var firstLines: [String: Int] = [:]
        var sawStation = false
        for section in lines.sections {
            guard case .station(let name, let validName) = section.header else { continue }
            sawStation = true
            var station = result.server.stationDefaults
            station.name = name
            station.encoder.serial = EncoderConfiguration().serial  // its own Ogg stream serial, not the template's
            let (clean, lines) = readStation(section, into: &station)
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
        // The MP3 output is the last: its mount is checked; its address only when it is a port of its own.
        for index in placed.indices where placed[index].station.mp3 {
            let lines = placed[index].mp3Lines
            placed[index].mountLines.append(lines.mount)
            if placed[index].station.mp3Port != 0 { placed[index].addressLines.append(lines.address) }
        }
        checkAddresses(placed, status: result.server.status, statusLine: statusLine)
        checkHTTP(placed, server: result.server, httpLine: httpLine, statusLine: statusLine)
        checkMounts(placed)
        guard problems.isEmpty else { throw problems.error }
        result.stations = placed.map(\.station)
        return result
    }

    /// Reads `[server]`; returns the lines of its `status` and `http` keys.
    private mutating func readServer(_ section: ConfigFileLines.Section, into server: inout ConfigFile.ServerSettings)
        -> (status: Int?, http: Int?)
    {
        let defaults = OptionSpecification.stationSettings.filter(\.isServerDefault)
        let logLevel = OptionSpecification.logLevel
        let httpProxy = OptionSpecification.httpProxyProtocol
        let httpProxyFrom = OptionSpecification.httpProxyFrom
        let threads = OptionSpecification.networkThreads
        let accessLog = OptionSpecification.accessLog
        let keys =
            [
                Self.statusKey, Self.statusTokenKey, Self.statusHostsKey, Self.httpKey, httpProxy.key,
                httpProxyFrom.key, threads.key, accessLog.key,
                logLevel.key,
            ] + defaults.map(\.key)
        var seen: [String: Int] = [:]
        for entry in section.entries where firstTime(entry, &seen) {
            guard let value = entry.value else { continue }
            switch entry.key {
            case Self.statusKey:
                guard hasValue(entry.key, value, line: entry.line, accepts: Self.statusAccepts) else { continue }
                if value == "off" {
                    server.status = nil
                } else if let address = ConfigFile.ListenAddress(parsing: value) {
                    server.status = address
                } else {
                    problems.add(entry.line, "\(entry.key) = \(Redaction.text(value)): use \(Self.statusAccepts)")
                    server.status = nil  // unknown, so no station is said to overlap it
                }
            case Self.httpKey:
                guard hasValue(entry.key, value, line: entry.line, accepts: Self.httpAccepts) else { continue }
                if value == "off" {
                    server.http = nil
                } else if let address = ConfigFile.ListenAddress(parsingPortOrAddress: value) {
                    server.http = address
                } else {
                    problems.add(entry.line, "\(entry.key) = \(Redaction.text(value)): use \(Self.httpAccepts)")
                }
            case httpProxy.key:
                if let on = self.value(entry, value, for: httpProxy, Values.yesNo) { server.httpProxyProtocol = on }
            case Self.statusTokenKey:
                guard let text = credential(value, line: entry.line) else { continue }
                guard hasValue(entry.key, value, line: entry.line, accepts: StatusToken.accepts) else { continue }
                if let token = StatusToken(text) {
                    server.statusAccess.token = token
                } else {
                    problems.add(entry.line, "\(entry.key) = \(Redaction.text(value)): use \(StatusToken.accepts)")
                }
            case Self.statusHostsKey:
                guard hasValue(entry.key, value, line: entry.line, accepts: Self.statusHostsAccepts) else { continue }
                let names = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingBlanks() }
                if names.allSatisfy(Self.isHostName) {
                    server.statusAccess = StatusAccess(token: server.statusAccess.token, names: names)
                } else {
                    problems.add(entry.line, "\(entry.key) = \(Redaction.text(value)): use \(Self.statusHostsAccepts)")
                }
            case httpProxyFrom.key:
                if let trusted = self.value(entry, value, for: httpProxyFrom, TrustedProxies.init(parsing:)) {
                    server.httpProxyFrom = trusted
                }
            case threads.key:
                if let count = self.value(entry, value, for: threads, Values.networkThreads) {
                    server.networkThreads = count
                }
            case accessLog.key:
                if let path = self.value(entry, value, for: accessLog, Values.absolutePath) { server.accessLog = path }
            case logLevel.key:
                if let level = self.value(entry, value, for: logLevel, Log.Priority.init(name:)) {
                    server.logLevel = level
                }
            default:
                if let option = defaults.first(where: { $0.key == entry.key }) {
                    _ = apply(entry.key, value, line: entry.line, option, to: &server.stationDefaults)
                } else {
                    problems.add(entry.line, Self.unknownKey(entry.key, in: "[server]", keys: keys))
                }
            }
        }
        return (seen[Self.statusKey], seen[Self.httpKey])
    }

    /// Reads a station's keys over `station`; returns whether all were good (and `upstream` given), and the lines
    /// its listening address comes from (`port`, else `bind`, else the section's header) and its mount.
    private mutating func readStation(_ section: ConfigFileLines.Section, into station: inout StationConfiguration)
        -> (clean: Bool, lines: (address: Int, mount: Int, mp3: Int, mp3Address: Int))
    {
        let label = station.name.isEmpty ? "[station]" : "[station \(station.name)]"
        var (clean, seen) = readKeys(section, OptionSpecification.stationSettings, label: label, into: &station)
        if seen["upstream"] == nil {
            problems.add(section.line, "\(label) has no upstream: add upstream = an http(s) URL, a file: URL or a path")
            clean = false
        }
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
        if Credentials.reference(in: value) != nil && !option.acceptsCredential {
            let keys = OptionSpecification.stationSettings.filter(\.acceptsCredential).map(\.key)
            problems.add(line, "\(key) cannot come from a credential: only \(Self.list(keys)) can")
            return false
        }
        guard let text = credential(value, line: line) else { return false }
        // Messages quote the file (`@credential:NAME`) or the value redacted (`Redaction`), never a secret.
        guard hasValue(key, value, line: line, accepts: option.accepts), let setting = option.setting,
            setting(text, &station)
        else {
            if !value.isEmpty { problems.add(line, "\(key) = \(option.complaint(about: text, as: value))") }
            return false
        }
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
