import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What `--help` explains: the whole program, or one command with only its own options.
package enum HelpTopic: Sendable, Equatable, CaseIterable {
    case overall
    case serve
    case transcode
    case checkConfig
    case status
    case report

    /// The command line that shows this help.
    package var invocation: String {
        switch self {
        case .overall: return "radio-relay --help"
        case .serve: return "radio-relay serve --help"
        case .transcode: return "radio-relay transcode --help"
        case .checkConfig: return "radio-relay check-config --help"
        case .status: return "radio-relay status --help"
        case .report: return "radio-relay report --help"
        }
    }

    /// The help text, printed to standard output.
    package var text: String {
        switch self {
        case .overall: return Self.overallText
        case .serve: return Self.serveText
        case .transcode: return Self.transcodeText
        case .checkConfig: return Self.checkConfigText
        case .status: return Self.statusText
        case .report: return Self.reportText
        }
    }

    private static let serveSynopsis = "radio-relay serve [options]"
    private static let transcodeSynopsis = "radio-relay transcode [options] INPUT OUTPUT"
    private static let configSynopsis = "radio-relay [serve] --config FILE [--log-level LEVEL]"
    private static let checkSynopsis = "radio-relay check-config FILE"
    private static let statusSynopsis = "radio-relay status [--url URL] [--token-file FILE] [--config FILE] [--json]"
    private static let reportSynopsis =
        "radio-relay report [--csv|--json] [--min-seconds N] [--station-of MOUNT=STATION]... ACCESS_LOG..."

    private static var overallText: String {
        """
        radio-relay \(RadioRelayVersion.string): relays an MP3 stream as Ogg Opus.

        usage:
          radio-relay [--log-level LEVEL] [--port P] [--bind ADDR] [--http [ADDR:]PORT] [--status ADDR:PORT]
                                           serve the bundled demo sample in a loop (default port 8000)
          \(serveSynopsis)      relay one station (listeners: ffplay tcp://HOST:PORT)
          \(configSynopsis)
                                           relay every station of a config file (/etc/radio-relay/radio-relay.conf)
          \(checkSynopsis)    check a config file: print OK, or every error with its line (status 78)
          \(transcodeSynopsis)
                                           INPUT: a path or an http(s)/file URL; OUTPUT: a .opus path or - (stdout)
          \(statusSynopsis)
                                           a running relay's stations as a table; exit 0 ok, 1 degraded, 2 down
          \(reportSynopsis)
                                           listening report of access logs (plain or gzip): sessions, TLH, peak
          radio-relay --version | --help
          radio-relay serve --help | transcode --help | check-config --help | status --help | report --help
                                           a command's options

        exit status: 0 done, 64 usage, 65 input is not MP3, 66 input missing, 69 unavailable (port in use, upstream
        server failing), 70 internal error, 71 system resources, 73 cannot create output, 77 no permission,
        78 bad configuration
        """
    }

    private static var serveText: String {
        """
        usage: \(serveSynopsis)
        Relays one station: listeners connect over raw TCP (ffplay tcp://HOST:PORT).
        With --config FILE, relays the stations of the file instead; then only --log-level may come with it.

        options:
        \(OptionSpecification.helpLines(OptionSpecification.serve))
        """
    }

    private static var checkConfigText: String {
        var keys = [""]
        for key in OptionSpecification.stationSettings.map(\.key) {
            if keys[keys.count - 1].count + key.count > 100 { keys.append("") }
            keys[keys.count - 1] += keys[keys.count - 1].isEmpty ? key : ", " + key
        }
        return """
            usage: \(checkSynopsis)
            Reads a config file as `radio-relay --config FILE` would, and runs nothing. Prints
            "FILE: OK, N stations (names)" and exits 0, or prints every problem as FILE:LINE: message and exits 78.

            The file: [server] with status = ADDR:PORT or off (default 127.0.0.1:8080), log_level, and the listener
            limits max_listeners and max_per_ip that stations inherit; then one [station NAME] per station
            (NAME: 1 to 64 of A-Z a-z 0-9 _ -) with the serve flags as keys, _ for -:
              \(keys.joined(separator: ",\n  "))
            upstream is required; upstream = @credential:NAME reads $CREDENTIALS_DIRECTORY/NAME (LoadCredential=).
            Comments start with # or ; at the start of a line; values may be in double quotes.
            """
    }

    private static var statusText: String {
        """
        usage: \(statusSynopsis)
        Reads a running relay's /status.json and prints one line per station: its state, the input that plays,
        listeners (raw/HTTP/HLS players), title, bitrate and uptime; with --json, the JSON as it came.

        options:
        \(OptionSpecification.helpLines(OptionSpecification.statusCommand))
          --json                           print /status.json as it came

        exit status (as a Nagios/Icinga plugin): 0 every station alive on its first input (or live), 1 one degraded
        (its input retrying, or a lower input playing), 2 one down or the endpoint unreadable, 3 a usage error
        """
    }

    private static var reportText: String {
        // The switches' summaries in the options' column.
        let width = OptionSpecification.report.map(\.synopsis.count).max() ?? 0
        func switchLine(_ flag: String, _ summary: String) -> String {
            "  " + flag + String(repeating: " ", count: max(0, width - flag.count) + 2) + summary
        }
        return """
            usage: \(reportSynopsis)
            Reads access logs (access_log = FILE) — plain or gzip, rotated files in any order, a line in two files counted
            once, - for standard input — and prints per mount and in total: sessions, unique listeners (address and user
            agent), listening hours (TLH), median and mean session, peak concurrent listeners, listening hours by hour of
            day (UTC). A listener ID is a session: one moved between mounts counts once in the total, its time on each
            mount. Probes (under --min-seconds) and relay edges (user agent radio-relay/...) are left out and counted;
            unreadable lines and sessions the server dropped (its "# radio-relay: N ... dropped" lines) are reported.

            options:
            \(OptionSpecification.helpLines(OptionSpecification.report))
            \(switchLine("--csv", "one CSV row per mount (or station) and the total, for spreadsheets"))
            \(switchLine("--json", "the same figures as one JSON object"))

            exit status: 0 done, 64 usage, 66 a file cannot be read (then no report)
            """
    }

    private static var transcodeText: String {
        """
        usage: \(transcodeSynopsis)
        INPUT: a path or an http(s)/file URL; OUTPUT: a .opus path or - (stdout).

        options:
        \(OptionSpecification.helpLines(OptionSpecification.transcode))
        """
    }
}
