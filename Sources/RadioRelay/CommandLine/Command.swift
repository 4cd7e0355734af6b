/// What the command line asks for, parsed and checked, before anything runs.
///
/// `parse` does no I/O and never exits: a wrong command line is a `UsageError`, which the caller prints and turns
/// into exit status 64.
package enum Command: Sendable {
    /// `radio-relay serve [options]`, and `radio-relay [--log-level LEVEL]` alone: the demo, which is `serve` with
    /// every default.
    case serve(ServeOptions)
    /// `radio-relay transcode [options] INPUT OUTPUT`.
    case transcode(input: String, output: String, options: Transcoder.Options)
    /// `radio-relay --version`.
    case version
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
        case "--version":
            guard rest.isEmpty else { throw UsageError("--version takes no arguments", topic: .overall) }
            return .version
        case "--help", "-h", "help":
            switch rest.first {
            case nil: return .help(.overall)
            case "serve": return .help(.serve)
            case "transcode": return .help(.transcode)
            case let other?: throw UsageError("no help for \(other): use serve or transcode", topic: .overall)
            }
        default:
            guard first.hasPrefix("-") else {
                throw UsageError("unknown command \(first): use serve or transcode", topic: .overall)
            }
            // The demo takes only a log level; a station's options need `serve`.
            let scanner = try ArgumentScanner(arguments[...], options: [.logLevel], topic: .overall)
            if scanner.wantsHelp { return .help(.overall) }
            if let extra = scanner.positional.first { throw scanner.error("unknown command \(extra)") }
            var demo = ServeOptions()
            demo.logLevel = try scanner.value("log-level", Log.Priority.init(name:)) ?? demo.logLevel
            return .serve(demo)
        }
    }

    private static func transcodeOptions(_ scanner: ArgumentScanner) throws(UsageError) -> Transcoder.Options {
        var options = Transcoder.Options()
        if let bitrate = try scanner.value("bitrate", Values.bitrate) { options.encoder.bitrate = bitrate }
        if let rate = try scanner.value("rate", Values.commonRate) { options.commonRate = rate }
        if let complexity = try scanner.value("complexity", Values.integer(0...10)) {
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
