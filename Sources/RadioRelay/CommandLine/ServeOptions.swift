import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `serve` as parsed: the server's settings and its one station, both read through the option table as a config
/// file's keys are; `configuration()` makes the `ServerConfiguration` a server runs from.
package struct ServeOptions: Sendable, Equatable {
    /// The station; an empty `upstream` stands for the bundled demo sample (`resolvedStation`).
    package var station = StationConfiguration()
    /// The server's flags (`--status`, `--http`, `--network-threads`, `--access-log`, `--log-level`); no status
    /// endpoint unless `--status` asks for one.
    package var server = ServerSettings.commandLine
    /// The options whose value carries a secret in plain text (a URL's password or a query value, not an
    /// `@credential:NAME`): it works, but any user of the machine can read a command line.
    package var secretsOnCommandLine: [String] = []

    /// Log lines less important than this are dropped (`Log.threshold`).
    package var logLevel: Log.Priority { server.logLevel }
    /// Where HTTP listeners connect (`--http`); nil: raw TCP only.
    package var http: ListenAddress? { server.http }
    /// Where the status endpoint listens (`--status`); nil: none.
    package var status: ListenAddress? { server.status }
    /// `--network-threads`; nil: auto.
    package var networkThreads: Int? { server.networkThreads }
    /// `--access-log`; nil: none.
    package var accessLog: String? { server.accessLog }
    /// HTTP connections start with a PROXY header: `serve --proxy-protocol yes` puts both the station's port and
    /// `--http` behind the balancer (a config file sets each on its own).
    package var httpProxyProtocol: Bool { server.httpProxyProtocol }
    /// The balancers `--http` believes: `--proxy-from`'s, as the station's port.
    package var httpProxyFrom: TrustedProxies? { server.httpProxyFrom }

    /// The warning for `secretsOnCommandLine`, naming the safer ways; nil when there is none.
    package var secretsWarning: String? {
        guard !secretsOnCommandLine.isEmpty else { return nil }
        let options = secretsOnCommandLine.map { "--\($0)" }.joined(separator: " and ")
        return "\(options) carries a password or token on the command line, where any user of this machine can read "
            + "it (ps, /proc): prefer @credential:NAME (systemd's LoadCredential=NAME:FILE) or a config file only the "
            + "service can read"
    }

    package init() {}

    /// The station to run, with the bundled demo sample where no upstream was given.
    /// - Throws: `ConfigurationError` when the sample is needed and missing from the installation.
    package func resolvedStation(sample: @autoclosure () -> String? = BundledSample.path)
        throws(ConfigurationError) -> StationConfiguration
    {
        var resolved = station
        if resolved.upstream.isEmpty {
            guard let sample = sample() else {
                throw ConfigurationError(
                    "no --upstream, and the bundled demo sample is missing: pass --upstream, or install the "
                        + "radio-relay_RadioRelay.resources folder beside the binary")
            }
            resolved.upstream = sample
        }
        return resolved
    }

    /// What the server runs: these settings and the station (the demo sample where no upstream was given).
    package func configuration(sample: @autoclosure () -> String? = BundledSample.path)
        throws(ConfigurationError) -> ServerConfiguration
    {
        let station = try resolvedStation(sample: sample())
        if let (_, problem) = ServerConfiguration.sourceProblems(server: server, stations: [station]).first {
            throw ConfigurationError(problem)
        }
        return ServerConfiguration(server: server, stations: [station])
    }

    init(_ scanner: ArgumentScanner) throws(UsageError) {
        var station = StationConfiguration()
        if let name = scanner.values["name"] { station.name = name }
        // The same settings, read the same way, as a config file's `[station NAME]` keys.
        for option in OptionSpecification.stationSettings {
            guard let setting = option.setting else { continue }
            let texts =
                option.isRepeatable
                ? scanner.allValues[option.name] ?? [] : scanner.values[option.name].map { [$0] } ?? []
            for text in texts where !setting(text, &station) {
                throw scanner.error("--\(option.name) \(option.complaint(about: text))")
            }
        }
        // Renditions take the station's other settings, whatever order the flags came in.
        for text in scanner.allValues[OptionSpecification.rendition.name] ?? [] {
            guard let rendition = Values.rendition(text, of: station) else {
                throw scanner.error("--rendition \(text): use \(OptionSpecification.rendition.accepts)")
            }
            station.renditions.append(rendition)
        }
        // The flags are checked one by one above; this catches a rule that spans flags.
        do {
            try station.encoder.validate()
            try station.broadcaster.validate()
            try station.validateOutputs()
            try station.validatePushes()
            // No upstream stands for the demo sample (`resolvedStation`).
            if !station.upstreams.isEmpty { try station.validateInputs() }
        } catch {
            throw scanner.error("\(error)")
        }
        self.station = station
        // A URL with a password or token in it, and a password itself (`--source-password`).
        secretsOnCommandLine = ["upstream", "push", "source-password"].filter { name in
            (scanner.allValues[name] ?? []).contains { value in
                !value.hasPrefix("@credential:") && (name == "source-password" || Redaction.text(value) != value)
            }
        }
        try readServerFlags(scanner)
    }

    /// The server's flags, read as `[server]` keys are; `--proxy-protocol` and `--proxy-from` cover `--http` too.
    mutating func readServerFlags(_ scanner: ArgumentScanner) throws(UsageError) {
        var server = ServerSettings.commandLine
        for option in OptionSpecification.serverOptions
        where option.isFlag
            && scanner.options.contains(where: {
                $0.name == option.name
            })
        {
            guard let setting = option.serverSetting, let text = scanner.values[option.name] else { continue }
            guard setting(text, &server) else {
                throw scanner.error("--\(option.name) \(option.complaint(about: text))")
            }
        }
        server.httpProxyProtocol = station.broadcaster.proxyProtocol
        server.httpProxyFrom = station.broadcaster.proxyFrom
        if let http = server.http, let status = server.status, ConfigFileReader.overlap(http, status) {
            throw scanner.error("--http \(http) and --status \(status) overlap: give each its own port")
        }
        if let http = server.http, station.broadcaster.rawListeners,
            ConfigFileReader.overlap(http, ConfigFileReader.address(of: station))
        {
            throw scanner.error("--http \(http) overlaps the station's port \(station.broadcaster.port)")
        }
        self.server = server
    }
}
