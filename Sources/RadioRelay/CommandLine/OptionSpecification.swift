import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// One `--flag VALUE` a command accepts: the single list that the parser, the help text and the config file's keys
/// are all made from, so that a flag and its key cannot drift apart.
struct OptionSpecification: Sendable {
    /// Sets the option on a station from its text; false when the text is not a value the option accepts.
    typealias StationSetting = @Sendable (String, inout StationConfiguration) -> Bool

    /// Without the dashes: "port".
    let name: String
    /// The value's placeholder in the help: "P".
    let placeholder: String
    /// What the option does, with its default, for the help.
    let summary: String
    /// What values it accepts, for error messages: "1 to 65535".
    let accepts: String
    /// How the option sets a station. Nil for options that are not station settings (`name`, `log-level`,
    /// `config`): only options with a setting are `[station NAME]` keys in a config file.
    let setting: StationSetting?
    /// A config file may give the value as `@credential:NAME`, read from systemd's `$CREDENTIALS_DIRECTORY`, so that
    /// a secret (an upstream password) stays out of the world-readable file.
    let acceptsCredential: Bool
    /// A config file's `[server]` section may set it too, as the default every station inherits.
    let isServerDefault: Bool
    /// The flag may be given several times, the key written several times in a section (`push`): each value adds
    /// one. Any other flag's last value wins, and a key given twice is an error.
    let isRepeatable: Bool
    /// Why a text is refused, when the option can say more than "use ACCEPTS"; the reason quotes no secret.
    let refusal: (@Sendable (String) -> String?)?
    /// The value as messages quote it: a push URL without its password.
    let quoted: @Sendable (String) -> String

    init(
        name: String, placeholder: String, summary: String, accepts: String, setting: StationSetting? = nil,
        acceptsCredential: Bool = false, isServerDefault: Bool = false, isRepeatable: Bool = false,
        refusal: (@Sendable (String) -> String?)? = nil, quoted: @escaping @Sendable (String) -> String = Redaction.text
    ) {
        self.name = name
        self.placeholder = placeholder
        self.summary = summary
        self.accepts = accepts
        self.setting = setting
        self.acceptsCredential = acceptsCredential
        self.isServerDefault = isServerDefault
        self.isRepeatable = isRepeatable
        self.refusal = refusal
        self.quoted = quoted
    }

    /// What is wrong with `text`, after the flag or key that carried it: "VALUE: use ACCEPTS", or the option's own
    /// reason; the value quoted without secrets.
    func complaint(about text: String, as written: String? = nil) -> String {
        "\(quoted(written ?? text)): \(refusal?(text) ?? "use \(accepts)")"
    }

    /// "--port P", as the help's first column shows it.
    var synopsis: String { "--\(name) \(placeholder)" }

    /// The option's key in a config file: the flag's name with `_` for `-` ("max-lag" → "max_lag").
    var key: String { String(name.map { $0 == "-" ? "_" : $0 }) }

    /// A setting that reads the text with `read` (one of `Values`) and stores what it read with `store`.
    static func station<Value>(
        _ read: @escaping @Sendable (String) -> Value?,
        _ store: @escaping @Sendable (inout StationConfiguration, Value) -> Void
    ) -> StationSetting {
        { text, station in
            guard let value = read(text) else { return false }
            store(&station, value)
            return true
        }
    }

    static let logLevel = OptionSpecification(
        name: "log-level", placeholder: "LEVEL", summary: "least important log lines shown (default info)",
        accepts: "error, warning, notice, info or debug")

    static let http = OptionSpecification(
        name: "http", placeholder: "[ADDR:]PORT",
        summary: "also serve HTTP listeners (browsers, apps) at /NAME.opus, a page at / (default: off)",
        accepts: "PORT, ADDR:PORT or [IPv6]:PORT, e.g. 8001 or 127.0.0.1:8001")

    /// A config file's `[server] http_proxy_protocol` (no flag: `serve --proxy-protocol` covers `--http` too).
    static let httpProxyProtocol = OptionSpecification(
        name: "http-proxy-protocol", placeholder: "yes|no",
        summary: "each HTTP connection starts with a load balancer's PROXY header (default no)",
        accepts: "yes or no")

    /// A config file's `[server] http_proxy_from` (no flag: `serve --proxy-from` covers `--http` too).
    static let httpProxyFrom = OptionSpecification(
        name: "http-proxy-from", placeholder: "ADDRS",
        summary: "balancers whose PROXY header the HTTP address believes (default 127.0.0.0/8, ::1)",
        accepts: TrustedProxies.accepts)

    /// `--network-threads`, a config file's `[server] network_threads`: the loops that serve every output's
    /// listeners.
    static let networkThreads = OptionSpecification(
        name: "network-threads", placeholder: "N",
        summary: "loops serving listeners, shared by all stations (default auto: the CPUs it may use)",
        accepts: "auto or 1 to 64")

    /// `--access-log FILE`, a config file's `[server] access_log`: a line per listener when it leaves.
    static let accessLog = OptionSpecification(
        name: "access-log", placeholder: "FILE",
        summary: "a line per listener when it leaves, in Icecast's combined format (default: none)",
        accepts: "a file's absolute path")

    static let status = OptionSpecification(
        name: "status", placeholder: "ADDR:PORT",
        summary: "status endpoint: /status.json, /metrics, /health (default: off)",
        accepts: "ADDR:PORT such as 127.0.0.1:8080 or [::1]:8080")

    static let config = OptionSpecification(
        name: "config", placeholder: "FILE",
        summary: "run the stations of a config file (no station flags with it)", accepts: "a config file's path")

    /// The `serve` options that configure a station, which are also the `[station NAME]` keys of a config file.
    static var stationSettings: [OptionSpecification] { serve.filter { $0.setting != nil } }

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
