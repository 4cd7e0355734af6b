import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Good config files: what they parse to (stations, inherited `[server]` defaults, credentials, the syntax's
/// allowances), and that the station keys are the `serve` flags. The shipped example and warnings:
/// `ConfigFileWarningTests`.
@Suite struct ConfigFileTests {
    static func parse(_ text: String, credentials: String? = nil) throws -> ServerConfiguration {
        try ServerConfiguration.parse(text, file: "r.conf", credentialsDirectory: credentials)
    }

    /// A credentials directory holding `files`, removed by the caller.
    static func credentials(_ files: [String: String]) throws -> String {
        let directory = temporaryPath("credentials")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, content) in files {
            try content.write(toFile: directory + "/" + name, atomically: false, encoding: .utf8)
        }
        return directory
    }

    @Test func threeStationsWithInheritedDefaultsAndACredential() throws {
        let directory = try Self.credentials(["talk-upstream": "http://user:secret@icecast.example/talk.mp3\n"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try Self.parse(
            """
            # radio-relay
            [server]
            status = [::1]:9090
            log_level = debug
            max_listeners = 500
            max_per_ip = 3

            [station jazz]
            upstream = http://icecast.example/jazz.mp3
            port = 8000
            flush_ms = auto
            flush_hold_ms = 450

            [station news]
            upstream = "/srv/news.mp3"
            port = 8001
            bind = 127.0.0.1
            bitrate = 48k
            page_ms = 20
            flush_ms = 0
            burst = 0.5
            max_lag = 30
            max_lead = 2.5
            max_listeners = 0
            max_per_ip = 1
            complexity = 5
            pace = no
            reconnect_max = 120
            chain_titles = yes

            [station talk]
            upstream = @credential:talk-upstream
            port = 8002
            """, credentials: directory)
        #expect(file.server.status == ListenAddress(host: "::1", port: 9090))
        #expect(file.server.logLevel == .debug)
        #expect(file.stations.map(\.name) == ["jazz", "news", "talk"])
        let serials = file.stations.map(\.encoder.serial)
        #expect(Set(serials).count == 3, "each station its own Ogg serial")

        var jazz = StationConfiguration()
        jazz.name = "jazz"
        jazz.encoder.serial = serials[0]
        jazz.upstream = "http://icecast.example/jazz.mp3"
        jazz.broadcaster.maxListeners = 500
        jazz.broadcaster.maxPerIP = 3
        jazz.broadcaster.flush = FlushPolicy(fixed: nil, hold: 0.45)
        #expect(file.stations[0] == jazz)

        var news = StationConfiguration()
        news.name = "news"
        news.encoder.serial = serials[1]
        news.upstream = "/srv/news.mp3"
        news.broadcaster.port = 8001
        news.broadcaster.bind = "127.0.0.1"
        news.encoder.bitrate = 48_000
        news.encoder.pageDuration = 20
        news.broadcaster.flushInterval = 0
        news.broadcaster.burst = 0.5
        news.broadcaster.maxLag = 30
        news.maxLead = 2.5
        news.broadcaster.maxListeners = 0
        news.broadcaster.maxPerIP = 1
        news.encoder.complexity = 5
        news.paced = false
        news.reconnectDelay = 1...120
        news.chainTitles = true
        #expect(file.stations[1] == news)

        var talk = jazz
        talk.name = "talk"
        talk.encoder.serial = serials[2]
        talk.upstream = "http://user:secret@icecast.example/talk.mp3"
        talk.broadcaster.port = 8002
        talk.broadcaster.flush = .auto
        #expect(file.stations[2] == talk)
    }

    @Test func theServerSectionIsOptionalAndMayComeLast() throws {
        let defaults = try Self.parse("[station a]\nupstream = /a.mp3\n")
        #expect(defaults.server.stationDefaults.broadcaster == BroadcasterConfiguration())
        #expect(defaults.server.status?.description == "127.0.0.1:8080" && defaults.server.logLevel == .info)
        #expect(defaults.stations[0].broadcaster.maxListeners == 20_000)
        let last = try Self.parse("[station a]\nupstream = /a.mp3\n[server]\nmax_per_ip = 2\nstatus = off\n")
        #expect(last.stations[0].broadcaster.maxPerIP == 2, "stations inherit [server] wherever it is")
        #expect(last.server.status == nil)
    }

    /// Comments with # and ;, blank and indented lines, tabs, quotes, CRLF and a byte order mark.
    @Test func theSyntaxAllowances() throws {
        let text =
            "\u{FEFF}; comment\r\n  # indented comment\r\n\r\n\t[ station  a-B_9 ]\r\n\tupstream\t=\t\"/srv/jazz#1.mp3\"  \r\n"
            + "name_ignored_here = \"\"\n"
        #expect(
            throws: ConfigFileError([
                "r.conf:6: unknown key name_ignored_here in [station a-B_9]: use "
                    + Self.keyList
            ])
        ) { try Self.parse(text) }
        let file = try Self.parse(text.replacingOccurrences(of: "name_ignored_here = \"\"\n", with: "bitrate=\"64k\""))
        #expect(file.stations.map(\.name) == ["a-B_9"])
        #expect(file.stations[0].upstream == "/srv/jazz#1.mp3" && file.stations[0].encoder.bitrate == 64_000)
    }

    static let keyList =
        "upstream, port, bind, bitrate, channels, page_ms, latency, flush_ms, flush_hold_ms, burst, max_lag, max_lead, max_listeners, "
        + "max_per_ip, proxy_protocol, proxy_from, complexity, pace, reconnect_max, connect_timeout, stall_timeout, "
        + "peer_timeout, standby, "
        + "dead_air, dead_air_level, recover, crossfade, loudness, true_peak, source_password, source_timeout, title, chain_titles, hls, mp3, mp3_port, hls_segment, hls_window, "
        + "mount, display_name, description, "
        + "genre, url, max_listener_duration, overflow, allow, deny, deny_agents, geoip, allow_countries, deny_countries, "
        + "listener_add, listener_remove, auth_header, auth_timeout, auth_failure, htpasswd, archive, archive_span, archive_keep, "
        + "record_live, record_live_source, record_live_max, push or push_ca"

    /// One naming rule: each station flag of `serve` is a key, `_` for `-`, and nothing else is.
    @Test func theStationKeysAreTheServeFlags() {
        let keys = OptionSpecification.stationSettings.map(\.key)
        #expect(
            keys == [
                "upstream", "port", "bind", "bitrate", "channels", "page_ms", "latency", "flush_ms", "flush_hold_ms",
                "burst",
                "max_lag",
                "max_lead", "max_listeners", "max_per_ip", "proxy_protocol", "proxy_from", "complexity", "pace",
                "reconnect_max", "connect_timeout", "stall_timeout", "peer_timeout", "standby", "dead_air",
                "dead_air_level", "recover",
                "crossfade", "loudness", "true_peak", "source_password", "source_timeout", "title", "chain_titles",
                "hls", "mp3",
                "mp3_port",
                "hls_segment", "hls_window", "mount",
                "display_name",
                "description", "genre",
                "url", "max_listener_duration", "overflow", "allow", "deny", "deny_agents", "geoip", "allow_countries",
                "deny_countries", "listener_add", "listener_remove", "auth_header", "auth_timeout", "auth_failure",
                "htpasswd", "archive", "archive_span", "archive_keep", "record_live", "record_live_source",
                "record_live_max", "push", "push_ca",
            ])
        let others = OptionSpecification.serve.filter { $0.setting == nil }.map(\.name)
        #expect(
            others == ["rendition", "name", "http", "status", "network-threads", "access-log", "config", "log-level"])
        for option in OptionSpecification.stationSettings {
            #expect(option.key == option.name.replacingOccurrences(of: "-", with: "_"))
        }
    }

    /// Behind a load balancer: a station's port and the HTTP address each expect a PROXY header when told to.
    @Test func proxyProtocolKeys() throws {
        let file = try Self.parse(
            "[server]\nhttp = 8001\nhttp_proxy_protocol = yes\n[station a]\nupstream = /a.mp3\nproxy_protocol = yes\n"
                + "[station b]\nupstream = /b.mp3\nport = 8002\nproxy_protocol = no\n")
        #expect(file.server.httpProxyProtocol)
        #expect(file.stations.map(\.broadcaster.proxyProtocol) == [true, false])
        let plain = try Self.parse("[station a]\nupstream = /a.mp3\n")
        #expect(!plain.server.httpProxyProtocol && !plain.stations[0].broadcaster.proxyProtocol)
        #expect(
            throws: ConfigFileError(["r.conf:2: http_proxy_protocol = on: use yes or no"])
        ) { try Self.parse("[server]\nhttp_proxy_protocol = on\n[station a]\nupstream = /a.mp3\n") }
    }

    @Test func stationNames() {
        for good in ["a", "Jazz-FM_2", String(repeating: "x", count: 64)] {
            #expect(ConfigFileLines.isValidName(good), "\(good)")
        }
        for bad in ["", "a b", "a.b", "ä", "a/b", String(repeating: "x", count: 65)] {
            #expect(!ConfigFileLines.isValidName(bad), "\(bad)")
        }
    }

    @Test func listenAddresses() {
        #expect(ListenAddress(parsing: "0.0.0.0:1")?.description == "0.0.0.0:1")
        #expect(ListenAddress(parsing: "[::]:65535")?.description == "[::]:65535")
        #expect(ListenAddress(parsing: "::1:8080") == ListenAddress(host: "::1", port: 8080))
        for bad in ["8080", "localhost:8080", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:", ":8080", "[::1]"] {
            #expect(ListenAddress(parsing: bad) == nil, "\(bad)")
        }
    }

    /// `push` is the one key a section may repeat: each adds an Icecast target, in order, and may be a credential.
    @Test func pushMayBeRepeatedAndComeFromACredential() throws {
        let directory = try Self.credentials(["ice2": "icecast://source:two@ice2.example:8001/a.opus\n"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try Self.parse(
            """
            [station a]
            upstream = /a.mp3
            push = icecast://source:one@ice1.example/a.opus
            push = @credential:ice2
            [station b]
            upstream = /b.mp3
            port = 8001
            """, credentials: directory)
        #expect(
            file.stations[0].pushes == [
                IcecastTarget(password: "one", host: "ice1.example", mount: "/a.opus"),
                IcecastTarget(password: "two", host: "ice2.example", port: 8001, mount: "/a.opus"),
            ])
        #expect(file.stations[1].pushes.isEmpty)
    }

    /// `push_ca` is read into the station, and only its `icecasts://` pushes take it (a plain push's settings, which
    /// decide whether a reload restarts it, do not change with it).
    @Test func pushCAGoesToTheTLSPushes() throws {
        let directory = try Self.credentials([
            "ca.pem": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        ])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try Self.parse(
            """
            [station a]
            upstream = /a.mp3
            push = icecasts://source:one@ice1.example:8443/a.opus
            push_ca = \(directory)/ca.pem
            push = icecast://source:two@ice2.example/a.opus
            [station b]
            upstream = /b.mp3
            port = 8001
            push = icecasts://source:three@ice3.example/b.opus
            """)
        #expect(file.stations.map(\.pushCA) == [directory + "/ca.pem", nil])
        #expect(file.stations[0].pushes.map(\.tls) == [true, false])
        let settings = file.stations[0].pushes.map { PushSettings(file.stations[0], target: $0) }
        #expect(settings.map(\.caFile) == [directory + "/ca.pem", nil])
        #expect(PushSettings(file.stations[1], target: file.stations[1].pushes[0]).caFile == nil)
    }
}
