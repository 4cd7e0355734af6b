import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What the command line asks for, parsed and checked, before anything runs.
///
/// `parse` does no I/O and never exits: a wrong command line is a `UsageError`, which the caller prints and turns
/// into exit status 64.
package enum Command: Sendable {
    /// `radio-relay serve [options]`, and `radio-relay [--log-level LEVEL]` alone: the demo, which is `serve` with
    /// every default.
    case serve(ServeOptions)
    /// `radio-relay --config FILE` or `radio-relay serve --config FILE`: the stations of a config file, read when it
    /// runs (`ServerConfiguration.load`). `logLevel` is `--log-level`, which overrides the file's `log_level`.
    case serveConfig(path: String, logLevel: Log.Priority?)
    /// `radio-relay check-config FILE`: read the file, report, run nothing.
    case checkConfig(path: String)
    /// `radio-relay transcode [options] INPUT OUTPUT`.
    case transcode(input: String, output: String, options: Transcoder.Options)
    /// `radio-relay --version`.
    case version
    /// `radio-relay status [--url URL] [--token-file FILE] [--config FILE] [--json]`.
    case status(StatusCommand)
    /// `radio-relay report [--csv|--json] [--min-seconds N] [--station-of MOUNT=STATION]… ACCESS_LOG…`.
    case report(ReportCommand)
    /// `--help`, `-h` or `help`, overall or after a command.
    case help(HelpTopic)

    /// Reads the arguments that follow the program's name.
    package static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let first = arguments.first else { return .serve(ServeOptions()) }
        let rest = arguments.dropFirst()
        switch first {
        case "serve":
            let scanner = try ArgumentScanner(rest, options: OptionSpecification.serve, topic: .serve)
            if scanner.wantsHelp { return .help(.serve) }
            if let extra = scanner.positional.first {
                throw scanner.error("serve takes only options, not \(extra)")
            }
            if let config = try configFile(scanner) { return config }
            return .serve(try ServeOptions(scanner))
        case "transcode":
            let scanner = try ArgumentScanner(rest, options: OptionSpecification.transcode, topic: .transcode)
            if scanner.wantsHelp { return .help(.transcode) }
            guard scanner.positional.count == 2 else {
                throw scanner.error("transcode needs 2 arguments, INPUT and OUTPUT; got \(scanner.positional.count)")
            }
            return .transcode(
                input: scanner.positional[0], output: scanner.positional[1],
                options: try transcodeOptions(scanner))
        case "status":
            // `--json` is a switch without a value; the scanner reads the rest.
            let scanner = try ArgumentScanner(
                rest.filter { $0 != "--json" }[...], options: OptionSpecification.statusCommand, topic: .status)
            if scanner.wantsHelp { return .help(.status) }
            if let extra = scanner.positional.first { throw scanner.error("status takes only options, not \(extra)") }
            var status = StatusCommand()
            status.url = scanner.values["url"]
            status.tokenFile = scanner.values["token-file"]
            status.config = scanner.values["config"]
            status.json = rest.contains("--json")
            if let url = status.url, (try? status.endpoint()) == nil {
                throw scanner.error("--url \(Redaction.text(url)): use http://HOST:PORT or HOST:PORT")
            }
            return .status(status)
        case "report":
            return try report(rest)
        case "check-config":
            let scanner = try ArgumentScanner(rest, options: [], topic: .checkConfig)
            if scanner.wantsHelp { return .help(.checkConfig) }
            guard scanner.positional.count == 1 else {
                throw scanner.error("check-config needs 1 argument, FILE; got \(scanner.positional.count)")
            }
            return .checkConfig(path: scanner.positional[0])
        case "--version":
            guard rest.isEmpty else { throw UsageError("--version takes no arguments", topic: .overall) }
            return .version
        case "--help", "-h", "help":
            switch rest.first {
            case nil: return .help(.overall)
            case "serve": return .help(.serve)
            case "transcode": return .help(.transcode)
            case "check-config": return .help(.checkConfig)
            case "status": return .help(.status)
            case "report": return .help(.report)
            case let other?:
                throw UsageError("no help for \(other): use \(commands)", topic: .overall)
            }
        default:
            guard first.hasPrefix("-") else {
                throw UsageError("unknown command \(first): use \(commands)", topic: .overall)
            }
            // The demo takes only a log level, where it listens (its port and address, HTTP and status), or a
            // config file; a station's other options need `serve`.
            let scanner = try ArgumentScanner(
                arguments[...], options: [.config, .logLevel, .port, .bind, .http, .status], topic: .overall)
            if scanner.wantsHelp { return .help(.overall) }
            if let extra = scanner.positional.first { throw scanner.error("unknown command \(extra)") }
            if let config = try configFile(scanner) { return config }
            return .serve(try ServeOptions(scanner))
        }
    }

    /// The commands, as a usage error lists them.
    static let commands = "serve, transcode, check-config, status or report"

    /// `.serveConfig` when `--config` was given, after checking that no station flag came with it (the file says
    /// everything about its stations; only `--log-level` may override it).
    private static func configFile(_ scanner: ArgumentScanner) throws(UsageError) -> Command? {
        guard let path = scanner.values[OptionSpecification.config.name] else { return nil }
        let allowed: Set = [OptionSpecification.config.name, OptionSpecification.logLevel.name]
        if let flag = scanner.options.map(\.name).first(where: { scanner.values[$0] != nil && !allowed.contains($0) }) {
            throw scanner.error("--config cannot be combined with --\(flag): set it in the config file")
        }
        return .serveConfig(
            path: path, logLevel: try scanner.value(OptionSpecification.logLevel.name, Log.Priority.init(name:)))
    }

    private static func transcodeOptions(_ scanner: ArgumentScanner) throws(UsageError) -> Transcoder.Options {
        var options = Transcoder.Options()
        if let bitrate = try scanner.value("bitrate", Values.bitrate) { options.encoder.bitrate = bitrate }
        if let rate = try scanner.value("rate", Values.commonRate) { options.commonRate = rate }
        if let complexity = try scanner.value("complexity", Values.integer(EncoderConfiguration.complexityRange)) {
            options.encoder.complexity = complexity
        }
        if let ms = try scanner.value("page-ms", Values.pageDuration) { options.encoder.pageDuration = ms }
        do {
            try options.encoder.validate()
        } catch {
            throw scanner.error("\(error)")
        }
        return options
    }
}
