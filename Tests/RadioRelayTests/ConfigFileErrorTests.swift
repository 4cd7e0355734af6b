import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Every way a config file can be wrong: the exact message, with its file and line, and that all problems come out
/// at once, in line order. Where a station's outputs go (ports, addresses, mounts, pushes) is in
/// `ConfigFileOutputErrorTests`.
@Suite struct ConfigFileErrorTests {
    static let station = "[station a]\nupstream = /a.mp3\n"
    static let keys = ConfigFileTests.keyList

    static func messages(_ text: String, credentials: String? = nil) -> [String] {
        do {
            _ = try ServerConfiguration.parse(text, file: "r.conf", credentialsDirectory: credentials)
            return []
        } catch {
            return error.messages
        }
    }

    @Test(
        arguments: [
            ("", ["r.conf: no [station NAME] section: add one per station, each with upstream = URL or path"]),
            (
                "# only a comment\n[server]\n",
                ["r.conf: no [station NAME] section: add one per station, each with upstream = URL or path"]
            ),
            (
                "upstream = /a.mp3\n" + station,
                ["r.conf:1: key upstream is outside any section: put it under [server] or [station NAME]"]
            ),
            (
                station + "just words\n",
                ["r.conf:3: expected [server], [station NAME], key = value, or a comment starting with # or ;"]
            ),
            (station + " = 5\n", ["r.conf:3: a value without a key: write key = value"]),
            (
                "[station e]\nupstream = http://root:8000/main.opus\nloudness = -16\n",
                [
                    "r.conf:1: station e: loudness needs decoded audio, and an edge relays its roots' Opus without decoding: set loudness on the root station, or remove it here"
                ]
            ),
            (
                "[station e]\nupstream = http://root:8000/main.opus\ntrue_peak = -3\n",
                [
                    "r.conf:1: station e: true_peak needs decoded audio, and an edge relays its roots' Opus without decoding: set true_peak on the root station, or remove it here"
                ]
            ),
            ("[station e]\nupstream = http://root:8000/main.opus\ntrue_peak = -1\n", []),
            (
                "[station a]\nupstream = \"/a.mp3\n",
                ["r.conf:2: the value of upstream opens a double quote that does not close"]
            ),
            (station + "[station b\n", ["r.conf:3: a section header must end with ]: [server] or [station NAME]"]),
            (
                station + "[stations b]\nport = 1\n",
                [
                    "r.conf:3: unknown section [stations b]: use [server], [station NAME], [rendition STATION/NAME], [input STATION/NAME] or [dj NAME]"
                ]
            ),
            (
                "[station]\nupstream = /a.mp3\n",
                ["r.conf:1: [station] needs a NAME: use 1 to 64 of A-Z a-z 0-9 _ -, as in [station jazz]"]
            ),
            (
                "[station a.b]\nupstream = /a.mp3\nvolume = 3\n",
                [
                    "r.conf:1: bad station name \"a.b\": use 1 to 64 of A-Z a-z 0-9 _ -, as in [station jazz]",
                    "r.conf:3: unknown key volume in [station a.b]: use \(keys)",
                ]
            ),
            (
                station + "[station \(String(repeating: "x", count: 65))]\nupstream = /b.mp3\n",
                [
                    "r.conf:3: bad station name \"\(String(repeating: "x", count: 65))\": use 1 to 64 of A-Z a-z 0-9 _ "
                        + "-, as in [station jazz]"
                ]
            ),
            (
                station + "port = 8000\n[station a]\nupstream = /b.mp3\nport = 8001\n",
                ["r.conf:4: duplicate station a (the first is at line 1): rename one"]
            ),
            (
                "[server]\n[server]\nfoo = 1\n" + station,
                [
                    "r.conf:2: a second [server] section (the first is at line 1): keep one",
                    "r.conf:3: unknown key foo in [server]: use status, status_token, status_hosts, http, http_proxy_protocol, http_proxy_from, forwarded_from, forwarded_header, public_url, admin_user, admin_password, network_threads, access_log, log_level, max_listeners, max_per_ip, proxy_from, max_listener_duration, overflow, allow, deny, deny_agents, geoip, allow_countries, deny_countries, listener_add, listener_remove, auth_header, auth_timeout, auth_failure, htpasswd, archive, archive_span, archive_keep, record_live, record_live_source or record_live_max",
                ]
            ),
            (station + "volume = 3\n", ["r.conf:3: unknown key volume in [station a]: use \(keys)"]),
            (station + "max-lag = 3\n", ["r.conf:3: unknown key max-lag in [station a]: write max_lag"]),
            (station + "name = b\n", ["r.conf:3: unknown key name in [station a]: use \(keys)"]),
            (station + "log_level = info\n", ["r.conf:3: unknown key log_level in [station a]: use \(keys)"]),
            (
                "[server]\nport = 8000\n" + station,
                [
                    "r.conf:2: unknown key port in [server]: use status, status_token, status_hosts, http, http_proxy_protocol, http_proxy_from, forwarded_from, forwarded_header, public_url, admin_user, admin_password, network_threads, access_log, log_level, max_listeners, max_per_ip, proxy_from, max_listener_duration, overflow, allow, deny, deny_agents, geoip, allow_countries, deny_countries, listener_add, listener_remove, auth_header, auth_timeout, auth_failure, htpasswd, archive, archive_span, archive_keep, record_live, record_live_source or record_live_max"
                ]
            ),
            (
                "[server]\nlog-level = info\n" + station,
                ["r.conf:2: unknown key log-level in [server]: write log_level"]
            ),
            (
                station + "port = 8000\nport = 8001\n",
                ["r.conf:4: duplicate key port (the first is at line 3): keep one"]
            ),
            (
                "[server]\nstatus = off\nstatus = off\n" + station,
                ["r.conf:3: duplicate key status (the first is at line 2): keep one"]
            ),
            (station + "port =\n", ["r.conf:3: port needs a value: 1 to 65535, or none"]),
            (station + "pace = \"\"\n", ["r.conf:3: pace needs a value: auto, yes or no"]),
            (
                "[station a]\nport = 8000\n",
                ["r.conf:1: [station a] has no upstream: add upstream = an http(s) URL, a file: URL or a path"]
            ),
            (
                "[station a]\nupstream = ftp://x/a.mp3\n",
                [
                    "r.conf:2: upstream = ftp://x/a.mp3: unsupported URL scheme ftp:// (use http://, https://, tcp://, file:// or a path)"
                ]
            ),
            ("[station a]\nupstream = http://:80/\n", ["r.conf:2: upstream = http://:80/: the URL has no host name"]),
            (
                "[server]\nstatus = localhost:8080\n" + station,
                ["r.conf:2: status = localhost:8080: use ADDR:PORT such as 127.0.0.1:8080 or [::1]:8080, or off"]
            ),
            (
                "[server]\nstatus =\n" + station,
                ["r.conf:2: status needs a value: ADDR:PORT such as 127.0.0.1:8080 or [::1]:8080, or off"]
            ),
            (
                "[server]\nlog_level = loud\n" + station,
                ["r.conf:2: log_level = loud: use error, warning, notice, info or debug"]
            ),
            ("[server]\nmax_listeners = -1\n" + station, ["r.conf:2: max_listeners = -1: use 0 to 1000000"]),
            (
                "[server]\nmax_per_ip = @credential:x\n" + station,
                [
                    "r.conf:2: max_per_ip cannot come from a credential: only upstream, source_password, listener_add, listener_remove or push can"
                ]
            ),
        ] as [(String, [String])])
    func problem(text: String, expected: [String]) {
        #expect(Self.messages(text) == expected)
    }

    /// Each station setting refused with the words of its flag: `key = VALUE: use …` where the command line says
    /// `--flag VALUE: use …`.
    @Test(
        arguments: [
            ("port", "0"), ("port", "eighty"), ("bind", "localhost"), ("bitrate", "5k"), ("page_ms", "30"),
            ("page_ms", "5"), ("latency", "lowest"),
            ("flush_ms", "2001"), ("flush_ms", "fast"), ("flush_hold_ms", "2001"), ("burst", "61"), ("burst", "inf"),
            ("max_lag", "0.4"), ("max_lead", "0.1"),
            ("max_listeners", "-1"), ("max_per_ip", "1000001"), ("complexity", "11"), ("pace", "maybe"),
            ("reconnect_max", "0.5"), ("reconnect_max", "3601"), ("chain_titles", "on"), ("loudness", "-3"),
            ("loudness", "loud"), ("true_peak", "1"), ("true_peak", "hot"), ("proxy_protocol", "on"),
        ])
    func outOfRange(key: String, value: String) throws {
        let flag = key.replacingOccurrences(of: "_", with: "-")
        var usage = ""
        do {
            _ = try Command.parse(["serve", "--\(flag)", value])
        } catch {
            usage = error.message
        }
        #expect(usage.hasPrefix("--\(flag) \(value): use "))
        let expected = "r.conf:3: \(key) = \(value): use " + usage.dropFirst("--\(flag) \(value): use ".count)
        #expect(Self.messages(Self.station + "\(key) = \(value)\n") == [expected])
    }

    @Test func credentials() throws {
        let directory = try ConfigFileTests.credentials(["empty": "\n", "bad-url": "gopher://u:secret@host/x\n"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cases: [(String, String?, String)] = [
            (
                "@credential:up", nil,
                "credential up: $CREDENTIALS_DIRECTORY is not set: run under systemd with LoadCredential=up:PATH"
            ),
            (
                "@credential:up", directory,
                "credential up is not in \(directory): add LoadCredential=up:PATH to the unit"
            ),
            (
                "@credential:a/b", directory,
                "credential name \"a/b\" is not valid: use the NAME of LoadCredential=NAME:PATH"
            ),
            ("@credential:", directory, "credential name \"\" is not valid: use the NAME of LoadCredential=NAME:PATH"),
            ("@credential:empty", directory, "credential empty is empty"),
            (
                "@credential:bad-url", directory,
                "upstream = @credential:bad-url: unsupported URL scheme gopher:// (use http://, https://, tcp://, file:// or a path)"
            ),
        ]
        for (value, credentials, message) in cases {
            #expect(
                Self.messages("[station a]\nupstream = \(value)\n", credentials: credentials) == [
                    "r.conf:2: \(message)"
                ])
        }
        #expect(
            Self.messages("[station a]\nupstream = /a.mp3\nport = @credential:empty\n", credentials: directory) == [
                "r.conf:3: port cannot come from a credential: only upstream, source_password, listener_add, listener_remove or push can"
            ])
    }

    @Test func unreadableFiles() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/r.conf"
        #expect(throws: ConfigFileError(["\(missing): cannot read: No such file or directory"])) {
            try ServerConfiguration.load(path: missing, credentialsDirectory: nil)
        }
        let directory = NSTemporaryDirectory()
        #expect(throws: ConfigFileError(["\(directory): cannot read: Is a directory"])) {
            try ServerConfiguration.load(path: directory, credentialsDirectory: nil)
        }
        let binary = temporaryPath("binary.conf")
        defer { try? FileManager.default.removeItem(atPath: binary) }
        try Data([0x5B, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: binary))
        #expect(throws: ConfigFileError(["\(binary): not UTF-8 text"])) {
            try ServerConfiguration.load(path: binary, credentialsDirectory: nil)
        }
        let huge = temporaryPath("huge.conf")
        defer { try? FileManager.default.removeItem(atPath: huge) }
        try Data(repeating: 0x23, count: (1 << 20) + 1).write(to: URL(fileURLWithPath: huge))
        #expect(throws: ConfigFileError(["\(huge): larger than 1 MiB: is this the config file?"])) {
            try ServerConfiguration.load(path: huge, credentialsDirectory: nil)
        }
    }

    /// Not just the first: every problem, in line order, file-wide ones last.
    @Test func everyProblemAtOnce() {
        let text = """
            [server]
            status = 1.2.3.4
            port = 3
            [station a b]
            upstream = /x.mp3
            [station c]
            port = 0
            max-lag = 3
            [weird]
            x = 1
            [station d]
            upstream = /d.mp3
            port = 8000
            [station e]
            upstream = /e.mp3
            port = 8000
            """
        #expect(
            Self.messages(text) == [
                "r.conf:2: status = 1.2.3.4: use ADDR:PORT such as 127.0.0.1:8080 or [::1]:8080, or off",
                "r.conf:3: unknown key port in [server]: use status, status_token, status_hosts, http, http_proxy_protocol, http_proxy_from, forwarded_from, forwarded_header, public_url, admin_user, admin_password, network_threads, access_log, log_level, max_listeners, max_per_ip, proxy_from, max_listener_duration, overflow, allow, deny, deny_agents, geoip, allow_countries, deny_countries, listener_add, listener_remove, auth_header, auth_timeout, auth_failure, htpasswd, archive, archive_span, archive_keep, record_live, record_live_source or record_live_max",
                "r.conf:4: bad station name \"a b\": use 1 to 64 of A-Z a-z 0-9 _ -, as in [station jazz]",
                "r.conf:6: [station c] has no upstream: add upstream = an http(s) URL, a file: URL or a path",
                "r.conf:7: port = 0: use 1 to 65535, or none",
                "r.conf:8: unknown key max-lag in [station c]: write max_lag",
                "r.conf:9: unknown section [weird]: use [server], [station NAME], [rendition STATION/NAME], [input STATION/NAME] or [dj NAME]",
                "r.conf:16: station e on 0.0.0.0:8000 overlaps station d on 0.0.0.0:8000 (line 13): give each station "
                    + "its own port",
            ])
    }

    @Test func theErrorIsAConfigurationErrorForTheExitStatus() {
        let error = ConfigFileError(["r.conf:1: x", "r.conf:2: y"])
        #expect(ExitCode(for: error) == .config)
        #expect("\(error)" == "r.conf:1: x\nr.conf:2: y")
    }
}
