/// One `--flag VALUE` a command accepts: the single list that both the parser and the help text are made from.
struct OptionSpecification: Sendable {
    /// Without the dashes: "port".
    let name: String
    /// The value's placeholder in the help: "P".
    let placeholder: String
    /// What the option does, with its default, for the help.
    let summary: String
    /// What values it accepts, for error messages: "1 to 65535".
    let accepts: String

    /// "--port P", as the help's first column shows it.
    var synopsis: String { "--\(name) \(placeholder)" }

    static let logLevel = OptionSpecification(
        name: "log-level", placeholder: "LEVEL", summary: "least important log lines shown (default info)",
        accepts: "error, warning, notice, info or debug")

    /// `serve`'s options, in the order its help lists them.
    static let serve: [OptionSpecification] = [
        .init(
            name: "upstream", placeholder: "URL",
            summary: "http(s) Icecast/SHOUTcast MP3 stream, or a file (played at real time, looped; default: demo)",
            accepts: "an http(s) URL, a file: URL or a path"),
        .init(name: "port", placeholder: "P", summary: "listening TCP port (default 8000)", accepts: "1 to 65535"),
        .init(
            name: "bind", placeholder: "ADDR", summary: "listening address (default 0.0.0.0; :: for IPv6)",
            accepts: "an IPv4 or IPv6 address such as 0.0.0.0 or ::"),
        .init(
            name: "bitrate", placeholder: "B", summary: "Opus bitrate (default 96k)",
            accepts: "6k to 510k, e.g. 96k or 96000"),
        .init(
            name: "page-ms", placeholder: "MS",
            summary: "Ogg page duration, multiple of 20 (default 100; 20 for low latency)",
            accepts: "a multiple of 20 from 20 to 1000"),
        .init(
            name: "flush-ms", placeholder: "MS",
            summary: "how often each listener is written to (default 300; 0 = every page)", accepts: "0 to 2000"),
        .init(
            name: "burst", placeholder: "SECONDS", summary: "audio sent at once to a new listener (default 2)",
            accepts: "0 to 60 seconds"),
        .init(
            name: "max-lag", placeholder: "SECONDS",
            summary: "how far behind a listener may fall before it is moved, then dropped (default 10)",
            accepts: "0.5 to 600 seconds"),
        .init(
            name: "max-lead", placeholder: "SECONDS",
            summary: "how far the audio may run ahead of real time; a faster upstream is held or trimmed (default 1)",
            accepts: "0.2 to 30 seconds"),
        .init(
            name: "max-listeners", placeholder: "N", summary: "listeners per station (default 20000; 0 = no limit)",
            accepts: "0 to 1000000"),
        .init(
            name: "max-per-ip", placeholder: "N", summary: "listeners per client address (default 0 = no limit)",
            accepts: "0 to 1000000"),
        .init(name: "complexity", placeholder: "N", summary: "libopus complexity (default 10)", accepts: "0 to 10"),
        .init(
            name: "pace", placeholder: "auto|yes|no",
            summary: "read the upstream at real time from its packets' durations (auto: files only)",
            accepts: "auto, yes or no"),
        .init(
            name: "name", placeholder: "NAME", summary: "station name in logs (default main)",
            accepts: "a non-empty name"),
        logLevel,
    ]

    /// `transcode`'s options, in the order its help lists them.
    static let transcode: [OptionSpecification] = [
        .init(
            name: "bitrate", placeholder: "B", summary: "Opus bitrate: 96k (default), 128000, …",
            accepts: "6k to 510k, e.g. 96k or 96000"),
        .init(
            name: "rate", placeholder: "HZ", summary: "common PCM rate: 48000 (default) or 44100",
            accepts: "48000 or 44100"),
        .init(
            name: "complexity", placeholder: "N", summary: "libopus complexity 0-10 (default 10)",
            accepts: "0 to 10"),
        .init(
            name: "page-ms", placeholder: "MS", summary: "Ogg page duration, a multiple of 20 (default 100)",
            accepts: "a multiple of 20 from 20 to 1000"),
    ]

    /// The options' help lines, the summaries aligned in a second column.
    static func helpLines(_ options: [OptionSpecification]) -> String {
        let width = options.map(\.synopsis.count).max() ?? 0
        return options.map { option in
            let padding = String(repeating: " ", count: width - option.synopsis.count + 2)
            return "  \(option.synopsis)\(padding)\(option.summary)"
        }.joined(separator: "\n")
    }
}
