import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Every way a config file can be wrong: the exact message, with its file and line, and that all problems come out
/// at once, in line order.
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
                "[station a]\nupstream = \"/a.mp3\n",
                ["r.conf:2: the value of upstream opens a double quote that does not close"]
            ),
            (station + "[station b\n", ["r.conf:3: a section header must end with ]: [server] or [station NAME]"]),
            (
                station + "[stations b]\nport = 1\n",
                [
                    "r.conf:3: unknown section [stations b]: use [server], [station NAME], [rendition STATION/NAME] or [input STATION/NAME]"
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
                    "r.conf:3: unknown key foo in [server]: use status, status_token, status_hosts, http, http_proxy_protocol, http_proxy_from, public_url, network_threads, access_log, log_level, max_listeners, max_per_ip or proxy_from",
                ]
            ),
            (station + "volume = 3\n", ["r.conf:3: unknown key volume in [station a]: use \(keys)"]),
            (station + "max-lag = 3\n", ["r.conf:3: unknown key max-lag in [station a]: write max_lag"]),
            (station + "name = b\n", ["r.conf:3: unknown key name in [station a]: use \(keys)"]),
            (station + "log_level = info\n", ["r.conf:3: unknown key log_level in [station a]: use \(keys)"]),
            (
                "[server]\nport = 8000\n" + station,
                [
                    "r.conf:2: unknown key port in [server]: use status, status_token, status_hosts, http, http_proxy_protocol, http_proxy_from, public_url, network_threads, access_log, log_level, max_listeners, max_per_ip or proxy_from"
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
            (station + "port =\n", ["r.conf:3: port needs a value: 1 to 65535"]),
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
                ["r.conf:2: max_per_ip cannot come from a credential: only upstream, source_password or push can"]
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
            ("flush_ms", "2001"), ("flush_ms", "fast"), ("flush_hold_ms", "2001"), ("burst", "61"), ("burst", "inf"),
            ("max_lag", "0.4"), ("max_lead", "0.1"),
            ("max_listeners", "-1"), ("max_per_ip", "1000001"), ("complexity", "11"), ("pace", "maybe"),
            ("reconnect_max", "0.5"), ("reconnect_max", "3601"), ("chain_titles", "on"), ("proxy_protocol", "on"),
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

    @Test(
        arguments: [
            ("", "0.0.0.0", 8000, "station b on 0.0.0.0:8000 overlaps station a on 0.0.0.0:8000 (line 3)"),
            (
                "bind = 127.0.0.1", "0.0.0.0", 8000,
                "station b on 0.0.0.0:8000 overlaps station a on 127.0.0.1:8000 (line 3)"
            ),
            ("bind = 127.0.0.1", "::", 8000, "station b on [::]:8000 overlaps station a on 127.0.0.1:8000 (line 3)"),
            ("bind = ::1", "0:0::1", 8000, "station b on [0:0::1]:8000 overlaps station a on [::1]:8000 (line 3)"),
            ("bind = 127.0.0.1", "127.0.0.2", 8000, nil),
            ("", "0.0.0.0", 8001, nil),
        ] as [(String, String, Int, String?)])
    func twoStationsOnOnePort(firstBind: String, secondBind: String, secondPort: Int, overlap: String?) {
        let text =
            "[station a]\nupstream = /a.mp3\nport = 8000\n\(firstBind)\n"
            + "[station b]\nupstream = /b.mp3\nbind = \(secondBind)\nport = \(secondPort)\n"
        let expected = overlap.map { ["r.conf:8: \($0): give each station its own port"] } ?? []
        #expect(Self.messages(text) == expected)
    }

    @Test func aStationOnTheStatusAddress() {
        #expect(
            Self.messages("[station a]\nupstream = /a.mp3\nport = 8080\n") == [
                "r.conf:3: station a on 0.0.0.0:8080 overlaps the status address 127.0.0.1:8080 (the default: set "
                    + "status in [server])"
            ])
        #expect(
            Self.messages("[server]\nstatus = [::]:9000\n[station a]\nupstream = /a.mp3\nbind = ::1\nport = 9000\n")
                == [
                    "r.conf:6: station a on [::1]:9000 overlaps the status address [::]:9000 ([server] status, line 2)"
                ])
        #expect(Self.messages("[server]\nstatus = off\n[station a]\nupstream = /a.mp3\nport = 8080\n").isEmpty)
        #expect(
            Self.messages("[server]\nstatus = 127.0.0.1:8081\n[station a]\nupstream = /a.mp3\nport = 8080\n").isEmpty)
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
                "r.conf:3: port cannot come from a credential: only upstream, source_password or push can"
            ])
    }

    /// A bad push is reported at its line with the password hidden (the file's text for a credential), a second
    /// push to one mount at the second line; any other key given twice is still an error.
    @Test func mp3PassThrough() {
        #expect(
            Self.messages("[station a]\nupstream = http://x/a.opus\nmp3 = yes\n") == [
                "r.conf:1: station a: mp3 = yes passes an MP3 upstream's frames through; this upstream is Ogg Opus: "
                    + "set mp3 = no (its Opus mounts serve it)"
            ])
        #expect(
            Self.messages(Self.station + "mp3 = yes\nmount = a.mp3\n") == [
                "r.conf:1: station a: mount a.mp3 is the MP3 pass-through output's: choose another"
            ])
        #expect(
            Self.messages(Self.station + "port = 9000\nmp3 = yes\nmp3_port = 9000\n") == [
                "r.conf:1: station a: mp3_port 9000 is the station's own port: give it another"
            ])
        // Another station's mount, and another station's port.
        #expect(
            Self.messages(
                Self.station
                    + "mp3 = yes\nmp3_port = 9100\n[station b]\nupstream = /b.mp3\nport = 9100\nmount = a.mp3\n")
                == [
                    "r.conf:7: station b on 0.0.0.0:9100 overlaps the MP3 output of station a on 0.0.0.0:9100 (line 4): "
                        + "give each output its own port",
                    "r.conf:8: station b: mount a.mp3 is also the MP3 output of station a's (line 3): give each output "
                        + "its own mount",
                ])
        #expect(
            Self.messages(Self.station + "mp3 = yes\nmount = a.mp3.opus\n") == [
                "r.conf:1: station a: the MP3 output a.mp3 has its events at /a.mp3/, as the mount a.mp3.opus does: "
                    + "give the station another mount"
            ])
        #expect(
            Self.messages(Self.station + "mp3_port = 9100\n") == [
                "r.conf:1: station a: mp3_port 9100 without mp3 = yes: set mp3 = yes, or remove mp3_port"
            ])
        #expect(Self.messages(Self.station + "mp3 = yes\n").isEmpty)
    }

    @Test func pushes() throws {
        let directory = try ConfigFileTests.credentials(["bad-push": "icecast://source:secret@host\n"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let noMount = "the URL has no mount: add one, as in icecast://source:PASSWORD@HOST:PORT/MOUNT"
        let text = """
            [station a]
            upstream = /a.mp3
            push = icecast://source:secret@host
            push = @credential:bad-push
            push = icecast://source:s1@h/a.opus
            push = icecast://dj:s2@H:8000/a.opus
            push = icecast://source:s3@h/b.opus
            push =
            upstream = /b.mp3
            """
        let messages = Self.messages(text, credentials: directory)
        #expect(
            messages == [
                "r.conf:3: push = icecast://***@host: \(noMount)",
                "r.conf:4: push = @credential:bad-push: \(noMount)",
                "r.conf:6: push to icecast://***@H:8000/a.opus again (the first is at line 5): Icecast takes one "
                    + "source per mount",
                "r.conf:8: push needs a value: icecast://source:PASSWORD@HOST:PORT/MOUNT",
            ])
        #expect(!messages.joined().contains("secret") && !messages.joined().contains("s2"))
    }

    /// `push_ca` must name a file that can be read and holds a PEM certificate: checked when the file is read, each
    /// refusal at its line with what to give instead.
    @Test func pushCA() throws {
        let directory = try ConfigFileTests.credentials([
            "not-pem.txt": "just words\n", "empty.pem": "",
            "ca.pem": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let use = "use a readable PEM file of CA certificates"
        func messages(_ value: String) -> [String] {
            Self.messages("[station a]\nupstream = /a.mp3\npush_ca = \(value)\n")
        }
        #expect(
            messages(directory + "/missing.pem") == [
                "r.conf:3: push_ca = \(directory)/missing.pem: cannot be read (No such file or directory): \(use)"
            ])
        #expect(messages(directory) == ["r.conf:3: push_ca = \(directory): cannot be read (Is a directory): \(use)"])
        for name in ["not-pem.txt", "empty.pem"] {
            #expect(
                messages("\(directory)/\(name)") == [
                    "r.conf:3: push_ca = \(directory)/\(name): holds no PEM certificate (-----BEGIN CERTIFICATE-----): "
                        + use
                ])
        }
        #expect(messages("") == ["r.conf:3: push_ca needs a value: a readable PEM file of CA certificates"])
        #expect(messages("\(directory)/ca.pem").isEmpty)
        #expect(
            Self.messages("[station a]\nupstream = /a.mp3\npush_ca = \(directory)/ca.pem\npush_ca = /b.pem\n") == [
                "r.conf:4: duplicate key push_ca (the first is at line 3): keep one"
            ])
        // Not a secret: it cannot come from a credential.
        #expect(
            Self.messages("[station a]\nupstream = /a.mp3\npush_ca = @credential:ca\n", credentials: directory) == [
                "r.conf:3: push_ca cannot come from a credential: only upstream, source_password or push can"
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
                "r.conf:3: unknown key port in [server]: use status, status_token, status_hosts, http, http_proxy_protocol, http_proxy_from, public_url, network_threads, access_log, log_level, max_listeners, max_per_ip or proxy_from",
                "r.conf:4: bad station name \"a b\": use 1 to 64 of A-Z a-z 0-9 _ -, as in [station jazz]",
                "r.conf:6: [station c] has no upstream: add upstream = an http(s) URL, a file: URL or a path",
                "r.conf:7: port = 0: use 1 to 65535",
                "r.conf:8: unknown key max-lag in [station c]: write max_lag",
                "r.conf:9: unknown section [weird]: use [server], [station NAME], [rendition STATION/NAME] or [input STATION/NAME]",
                "r.conf:16: station e on 0.0.0.0:8000 overlaps station d on 0.0.0.0:8000 (line 13): give each station "
                    + "its own port",
            ])
    }

    @Test func theErrorIsAConfigurationErrorForTheExitStatus() {
        let error = ConfigFileError(["r.conf:1: x", "r.conf:2: y"])
        #expect(ExitCode(for: error) == .config)
        #expect("\(error)" == "r.conf:1: x\nr.conf:2: y")
    }

    /// `[server] http`: its value, its overlaps with stations and the status address, and mounts two stations share.
    @Test func theHTTPAddressAndMounts() throws {
        let good = try ServerConfiguration.parse(
            "[server]\nhttp = 8001\n[station a]\nupstream = /a.mp3\nmount = /live.opus\ndisplay_name = A FM\n",
            file: "r.conf", credentialsDirectory: nil)
        #expect(good.server.http == ListenAddress(host: "0.0.0.0", port: 8001))
        #expect(good.stations[0].mountPath == "/live.opus" && good.stations[0].info.displayName == "A FM")
        #expect(
            try ServerConfiguration.parse(
                "[server]\nhttp = off\n[station a]\nupstream = /a.mp3\n", file: "r.conf", credentialsDirectory: nil
            ).server.http == nil)
        #expect(
            Self.messages("[server]\nhttp = [::]:8000\n[station a]\nupstream = /a.mp3\n") == [
                "r.conf:2: http = [::]:8000 overlaps station a on 0.0.0.0:8000 (line 3): give HTTP its own port"
            ])
        #expect(
            Self.messages("[server]\nhttp = 127.0.0.1:8080\n[station a]\nupstream = /a.mp3\nport = 8001\n") == [
                "r.conf:2: http = 127.0.0.1:8080 overlaps the status address 127.0.0.1:8080 (the default)"
            ])
        #expect(
            Self.messages("[server]\nhttp = x\n[station a]\nupstream = /a.mp3\n") == [
                "r.conf:2: http = x: use PORT, ADDR:PORT such as 0.0.0.0:8001 or [::]:8001, or off"
            ])
        #expect(
            Self.messages(
                "[station a]\nupstream = /a.mp3\nmount = b.opus\n[station b]\nupstream = /b.mp3\nport = 8001\n") == [
                    "r.conf:4: station b: mount b.opus is also station a's (line 3): give each output its own mount"
                ])
        // `/b` and `/b.opus` would share `/b/` for events and HLS.
        #expect(
            Self.messages(
                "[station a]\nupstream = /a.mp3\nmount = b\n[station b]\nupstream = /b.mp3\nport = 8001\n") == [
                    "r.conf:4: station b: mount b.opus has its events and HLS at /b/, as station a's mount does (line "
                        + "3): give each output its own name (a final .opus is dropped there)"
                ])
        #expect(
            Self.messages("[station a]\nupstream = /a.mp3\ngenre = \"\u{1B}[31m\"\nmount = a/b\n") == [
                "r.conf:3: genre = \u{1B}[31m: use one line of 1 to 256 printable characters",
                "r.conf:4: mount = a/b: use 1 to 128 of A-Z a-z 0-9 _ - . not starting with a dot",
            ])
    }
}
