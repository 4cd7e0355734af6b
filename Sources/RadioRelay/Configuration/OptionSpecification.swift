import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// One option: a `--flag VALUE` a command accepts, a config file's key, or both — the single table that the parser,
/// the help text, the config file's `[server]` and `[station NAME]` keys and the reload plan are all made from, so
/// that a flag and its key cannot drift apart, and a setting lives in one place: its reader (with its range), its
/// default (in the value it sets), and what a reload does when it changes (`reload`).
struct OptionSpecification: Sendable {
    /// Sets the option on a station from its text; false when the text is not a value the option accepts.
    typealias StationSetting = @Sendable (String, inout StationConfiguration) -> Bool
    /// Sets the option on the server's settings from its text; false when the text is not a value it accepts.
    typealias ServerSetting = @Sendable (String, inout ServerSettings) -> Bool
    /// Sets the option on a DJ account's settings from its text; false when the text is not a value it accepts.
    typealias AccountSetting = @Sendable (String, inout DJSettings) -> Bool

    /// What the option sets.
    enum Target: Sendable {
        /// A station's setting: a `serve` flag and a `[station NAME]` key (and a `[server]` key when
        /// `isServerDefault`).
        case station(StationSetting)
        /// The server's: a `[server]` key, and a `serve` flag when `isFlag`. `differs` compares two settings' values,
        /// `shown` is the value as a log line quotes it (no secret), `adopt` copies the value of the second settings
        /// into the first (a reload that applies the key in place).
        case server(
            ServerSetting, differs: @Sendable (ServerSettings, ServerSettings) -> Bool,
            shown: @Sendable (ServerSettings) -> String, adopt: @Sendable (inout ServerSettings, ServerSettings) -> Void
        )
        /// A DJ account's: a `[dj NAME]` key (`OptionSpecification.accountOptions`), never a flag.
        case account(AccountSetting)
    }

    /// Without the dashes: "port".
    let name: String
    /// The value's placeholder in the help: "P".
    let placeholder: String
    /// What the option does, with its default, for the help.
    let summary: String
    /// What values it accepts, for error messages: "1 to 65535".
    let accepts: String
    /// What it sets; nil for options that only steer the command line (`name`, `config`, `rendition`).
    let target: Target?
    /// It is a flag of `serve` (false: a config file's key only, such as `status_token`).
    let isFlag: Bool
    /// A config file may give the value as `@credential:NAME`, read from systemd's `$CREDENTIALS_DIRECTORY`, so that
    /// a secret (an upstream password) stays out of the world-readable file.
    let acceptsCredential: Bool
    /// A station setting that a config file's `[server]` section may set too, as the default every station
    /// inherits.
    let isServerDefault: Bool
    /// The flag may be given several times, the key written several times in a section (`push`): each value adds
    /// one. Any other flag's last value wins, and a key given twice is an error.
    let isRepeatable: Bool
    /// What a reload (SIGHUP) does when the value changes; nil for options a config file cannot set.
    let reload: ReloadRule?
    /// Why a text is refused, when the option can say more than "use ACCEPTS"; the reason quotes no secret.
    let refusal: (@Sendable (String) -> String?)?
    /// The value as messages quote it: a push URL without its password.
    let quoted: @Sendable (String) -> String
    /// For a station setting: how the values of two stations' settings compare, and how one takes the other's (what
    /// a reload plan reads, `StationReload`); nil for the others.
    let stationValue: StationValue?
    /// For a key an `[input STATION/NAME]` section takes: what it sets on the input, from the settings the section
    /// was read into (the station's, with the section's keys over them); nil for the keys an input does not take.
    let input: InputField?
    typealias InputField = @Sendable (StationConfiguration, inout InputConfiguration) -> Void

    init(
        name: String, placeholder: String, summary: String, accepts: String, setting: StationValue? = nil,
        target: Target? = nil, isFlag: Bool = true, acceptsCredential: Bool = false, isServerDefault: Bool = false,
        isRepeatable: Bool = false, reload: ReloadRule? = nil, refusal: (@Sendable (String) -> String?)? = nil,
        quoted: @escaping @Sendable (String) -> String = Redaction.text, input: InputField? = nil
    ) {
        self.input = input
        self.name = name
        self.placeholder = placeholder
        self.summary = summary
        self.accepts = accepts
        self.target = target ?? setting.map { .station($0.set) }
        stationValue = setting
        self.isFlag = isFlag
        self.acceptsCredential = acceptsCredential
        self.isServerDefault = isServerDefault
        self.isRepeatable = isRepeatable
        self.reload = reload
        self.refusal = refusal
        self.quoted = quoted
    }

    /// How it sets a station, if it is a station setting.
    var setting: StationSetting? {
        if case .station(let setting) = target { return setting }
        return nil
    }

    /// How it sets the server's settings, if it is a server setting.
    var serverSetting: ServerSetting? {
        if case .server(let setting, _, _, _) = target { return setting }
        return nil
    }

    /// How it sets a DJ account, if it is a `[dj NAME]` key.
    var accountSetting: AccountSetting? {
        if case .account(let setting) = target { return setting }
        return nil
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

    /// A setting that reads the text with `read` (one of `Values`) and stores what it read at `path`, the value a
    /// reload compares.
    static func station<Value: Equatable & SendableMetatype>(
        _ read: @escaping @Sendable (String) -> Value?,
        _ path: any WritableKeyPath<StationConfiguration, Value> & Sendable
    ) -> StationValue {
        station(read, { $0[keyPath: path] = $1 }, compared: path)
    }

    /// A setting that reads the text with `read` and stores what it read with `store`; a reload compares the value
    /// at `compared` (what `store` changes).
    static func station<Value, Compared: Equatable & SendableMetatype>(
        _ read: @escaping @Sendable (String) -> Value?,
        _ store: @escaping @Sendable (inout StationConfiguration, Value) -> Void,
        compared: any WritableKeyPath<StationConfiguration, Compared> & Sendable
    ) -> StationValue {
        StationValue(
            set: { text, station in
                guard let value = read(text) else { return false }
                store(&station, value)
                return true
            },
            differs: { $0[keyPath: compared] != $1[keyPath: compared] },
            adopt: { $0[keyPath: compared] = $1[keyPath: compared] })
    }

    static let config = OptionSpecification(
        name: "config", placeholder: "FILE",
        summary: "run the stations of a config file (no station flags with it)", accepts: "a config file's path")

    /// Every option of the table: `serve`'s flags, then the keys a config file has without a flag (the `[server]`
    /// ones, then the `[dj NAME]` ones).
    static var all: [OptionSpecification] { serve + fileOnly + accountOptions }

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

    /// `radio-relay status`'s options (`--json` takes no value: `Command` reads it before these).
    static let statusCommand: [OptionSpecification] = [
        .init(
            name: "url", placeholder: "URL",
            summary:
                "the status endpoint: http://HOST:PORT (default: the config's status address, else 127.0.0.1:8080)",
            accepts: "http://HOST:PORT or HOST:PORT"),
        .init(
            name: "token-file", placeholder: "FILE", summary: "a file whose first line is the status token",
            accepts: "a readable file"),
        .init(
            name: "config", placeholder: "FILE",
            summary: "the config file whose status address to read (default /etc/radio-relay/radio-relay.conf)",
            accepts: "a config file's path"),
    ]

    /// `radio-relay report`'s options (`--csv` and `--json` take no value: `Command` reads them before these).
    static let report: [OptionSpecification] = [
        .init(
            name: "min-seconds", placeholder: "N",
            summary: "sessions shorter than N seconds are probes, left out and counted apart (default 5)",
            accepts: "0 to 86400"),
        .init(
            name: "station-of", placeholder: "MOUNT=STATION",
            summary: "count MOUNT under STATION (repeatable: a station's mounts and HLS directory as one row)",
            accepts: "MOUNT=STATION", isRepeatable: true),
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

/// A station setting's value: how it is set from text, how two stations' settings compare in it, and how one takes
/// the other's (a reload plan finds what changed this way, and that nothing changed outside the table).
struct StationValue: Sendable {
    let set: OptionSpecification.StationSetting
    let differs: @Sendable (StationConfiguration, StationConfiguration) -> Bool
    let adopt: @Sendable (inout StationConfiguration, StationConfiguration) -> Void
}
