import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The command line as a value: every flag in both forms, the demo's and `transcode`'s defaults (every usage error's
/// message, help per command, and the exit status for each kind of error: `CommandLineUsageTests`); then the real
/// binary once for each status the parser and main produce.
@Suite struct CommandLineTests {
    // MARK: - Helpers

    static func serve(_ arguments: [String]) throws -> ServeOptions {
        guard case .serve(let options) = try Command.parse(arguments) else {
            throw UsageError("not serve: \(arguments)", topic: .overall)
        }
        return options
    }

    static func transcode(_ arguments: [String]) throws -> (input: String, output: String, Transcoder.Options) {
        guard case .transcode(let input, let output, let options) = try Command.parse(arguments) else {
            throw UsageError("not transcode: \(arguments)", topic: .overall)
        }
        return (input, output, options)
    }

    /// `[--flag, value]` or `[--flag=value]`.
    static func flags(_ pairs: [(String, String)], joined: Bool) -> [String] {
        pairs.flatMap { joined ? ["--\($0.0)=\($0.1)"] : ["--\($0.0)", $0.1] }
    }

    // MARK: - serve and the demo

    @Test func noArgumentsRunTheDemoWithEveryDefault() throws {
        let demo = try Self.serve([])
        let defaults = StationConfiguration()
        #expect(demo.station.upstream.isEmpty)
        #expect(demo.station.broadcaster == defaults.broadcaster)
        #expect(demo.station.name == defaults.name && demo.station.paced == nil && !demo.station.chainTitles)
        #expect(demo.station.encoder.bitrate == 96_000 && demo.station.encoder.pageDuration == 100)
        #expect(demo.logLevel == .info)
    }

    @Test func serveWithoutOptionsHasTheDefaults() throws {
        let serve = try Self.serve(["serve"])
        let defaults = StationConfiguration()
        #expect(serve.station.upstream.isEmpty)
        #expect(serve.station.broadcaster == defaults.broadcaster)
        #expect(serve.station.encoder.bitrate == defaults.encoder.bitrate)
        #expect(serve.station.encoder.complexity == defaults.encoder.complexity)
        #expect(serve.station.encoder.pageDuration == defaults.encoder.pageDuration)
        #expect(serve.station.broadcaster.flush == .auto)
        #expect(serve.logLevel == .info)
    }

    @Test(arguments: [false, true]) func serveReadsEveryFlag(joined: Bool) throws {
        let caFile = temporaryPath("ca.pem")
        try Self.pem.write(toFile: caFile, atomically: false, encoding: .utf8)
        defer { unlink(caFile) }
        let agentsFile = temporaryPath("agents.txt")
        try "*ripper*\n".write(toFile: agentsFile, atomically: false, encoding: .utf8)
        defer { unlink(agentsFile) }
        let countriesFile = temporaryPath("countries.mmdb")
        try writeCountryDatabase(countriesFile, [("198.51.100.0/24", "FR")])
        defer { unlink(countriesFile) }
        let htpasswdFile = temporaryPath("listeners.htpasswd")
        try "alice:\(ListenerAuthTests.vectors[0])\n".write(toFile: htpasswdFile, atomically: false, encoding: .utf8)
        defer { unlink(htpasswdFile) }
        let pairs = [
            ("upstream", "http://example.com/stream.mp3"), ("port", "9000"), ("bind", "::"), ("bitrate", "128k"),
            ("page-ms", "10"), ("latency", "low"), ("flush-ms", "0"), ("flush-hold-ms", "450"), ("burst", "0.5"),
            ("max-lag", "30"), ("max-lead", "2.5"), ("max-listeners", "5"), ("max-per-ip", "2"), ("complexity", "3"),
            ("pace", "yes"), ("reconnect-max", "120"), ("name", "jazz"),
            ("chain-titles", "yes"), ("log-level", "debug"), ("channels", "1"), ("mount", "/live.opus"),
            ("rendition", "low:9001:32k:mono"), ("display-name", "Jazz FM"), ("description", "All jazz"),
            ("genre", "jazz"), ("url", "https://jazz.example.org/"), ("http", "8001"), ("status", "[::1]:8080"),
            ("network-threads", "3"), ("hls", "no"), ("hls-segment", "4.5"), ("hls-window", "10"),
            ("mp3", "yes"), ("mp3-port", "9002"), ("access-log", "/var/log/radio-relay/access.log"),
            ("proxy-protocol", "yes"), ("proxy-from", "10.0.0.0/8, ::1"),
            ("push", "icecast://source:hackme@icecast.example:8000/jazz.opus"), ("push-ca", caFile),
            ("connect-timeout", "3"), ("stall-timeout", "4"), ("standby", "hot"), ("dead-air", "5"),
            ("dead-air-level", "-40"), ("recover", "20"), ("crossfade", "1.5"), ("loudness", "-18"),
            ("true-peak", "-2"),
            ("title", "Station ID"),
            ("source-password", "hackme-live-1"), ("source-timeout", "7"), ("peer-timeout", "45"),
            ("max-listener-duration", "3600"), ("overflow", "http://edge.example:8001/jazz.opus"),
            ("allow", "10.0.0.0/8"), ("deny", "10.1.0.0/16, 2001:db8::/32"), ("deny-agents", "@" + agentsFile),
            ("geoip", countriesFile), ("allow-countries", "FR, unknown"), ("deny-countries", "RU"),
            ("listener-add", "https://auth.example.org/add?key=k"), ("listener-remove", "https://auth.example.org/rm"),
            ("auth-header", "X-Member: yes"), ("auth-timeout", "2.5"), ("auth-failure", "admit"),
            ("htpasswd", htpasswdFile), ("archive", "/var/lib/archive"), ("archive-span", "3600"),
            ("archive-keep", "7d 50G"), ("record-live", "/var/lib/shows"), ("record-live-source", "yes"),
            ("record-live-max", "90m"),
        ]
        // --config replaces the station flags; ConfigFileCommandTests covers it.
        let flags = Set(OptionSpecification.serve.map(\.name)).subtracting(["config"])
        #expect(Set(pairs.map(\.0)) == flags, "a flag is not tested")
        let serve = try Self.serve(["serve"] + Self.flags(pairs, joined: joined))
        let station = serve.station
        #expect(station.upstream == "http://example.com/stream.mp3")
        #expect(station.mountPath == "/live.opus" && station.info.displayName == "Jazz FM")
        #expect(
            station.archive.directory == "/var/lib/archive" && station.archive.span == 3600
                && station.archive.keep == ArchiveKeep(seconds: 7 * 86_400, bytes: 50 << 30))
        #expect(
            station.recording.directory == "/var/lib/shows" && station.recording.keepsSource
                && station.recording.maxSeconds == 5_400)
        #expect(station.info.description == "All jazz" && station.info.genre == "jazz")
        #expect(station.info.url == "https://jazz.example.org/")
        #expect(serve.http == ListenAddress(host: "0.0.0.0", port: 8001))
        #expect(serve.status == ListenAddress(host: "::1", port: 8080))
        #expect(serve.networkThreads == 3)
        #expect(try Self.serve(["serve", "--network-threads", "auto"]).networkThreads == nil)
        #expect(station.broadcaster.port == 9000 && station.broadcaster.bind == "::")
        #expect(station.encoder.bitrate == 128_000 && station.encoder.pageDuration == 10 && station.encoder.lowDelay)
        #expect(station.broadcaster.flush == FlushPolicy(fixed: 0, hold: 0.45))
        #expect(station.broadcaster.burst == 0.5 && station.broadcaster.maxLag == 30)
        #expect(station.maxLead == 2.5)
        #expect(station.broadcaster.maxListeners == 5 && station.broadcaster.maxPerIP == 2)
        #expect(station.encoder.complexity == 3)
        #expect(station.paced == true && station.name == "jazz")
        #expect(station.reconnectDelay == 1...120)
        #expect(station.chainTitles)
        #expect(station.mp3 && station.mp3Port == 9002)
        #expect(serve.accessLog == "/var/log/radio-relay/access.log")
        #expect(!station.hls && station.hlsSettings == HLSSegmenter.Settings(segmentSeconds: 4.5, window: 10))
        #expect(station.pushes == [IcecastTarget(password: "hackme", host: "icecast.example", mount: "/jazz.opus")])
        #expect(station.pushCA == caFile)
        #expect(station.connectTimeout == 3 && station.stallTimeout == 4 && station.title == "Station ID")
        var failover = FailoverSettings()
        failover.hotStandby = true
        failover.deadAir = 5
        failover.deadAirLevel = -40
        failover.recover = 20
        failover.crossfade = 1.5
        #expect(station.failover == failover && station.loudness == -18 && station.truePeak == -2)
        #expect(station.sourcePassword == SourcePassword("hackme-live-1") && station.sourceTimeout == 7)
        #expect(station.peerTimeout == 45 && station.outputSettings.allSatisfy { $0.broadcaster.peerTimeout == 45 })
        #expect(station.inputs.first?.isLive == true && station.inputs.first?.name == "live")
        #expect(serve.logLevel == .debug)
        let auth = station.authentication
        #expect(auth.addURL?.raw == "https://auth.example.org/add?key=k" && "\(auth.addURL!)".contains("key=***"))
        #expect(auth.removeURL?.raw == "https://auth.example.org/rm" && auth.header == AuthHeader("x-member: yes"))
        #expect(auth.timeout == 2.5 && auth.failure == .admit && auth.htpasswd?.count == 1)
        #expect(station.broadcaster.proxyProtocol && serve.httpProxyProtocol)
        #expect(station.broadcaster.trustedProxies.description == "10.0.0.0/8, ::1")
        #expect(serve.httpProxyFrom?.description == "10.0.0.0/8, ::1")
        let plain = try Self.serve(["serve"])
        #expect(!plain.station.broadcaster.proxyProtocol && !plain.httpProxyProtocol)
        #expect(throws: UsageError.self) { try Self.serve(["serve", "--proxy-protocol", "on"]) }
        #expect(throws: UsageError.self) { try Self.serve(["serve", "--http-proxy-protocol", "yes"]) }
        #expect(station.encoder.channels == 1 && station.mount == "live.opus")
        let low = try #require(station.renditions.first)
        #expect(station.renditions.count == 1 && low.name == "low" && low.mount(in: "jazz") == "jazz-low.opus")
        #expect(low.broadcaster.port == 9001 && low.encoder.bitrate == 32_000 && low.encoder.channels == 1)
        // The rest is the station's: bind, page duration, limits.
        #expect(low.broadcaster.bind == "::" && low.encoder.pageDuration == 10 && low.broadcaster.maxListeners == 5)
        #expect(low.encoder.serial != station.encoder.serial)
        // Who may listen, and for how long (`OptionSpecification.listenerRules`).
        #expect(station.broadcaster.maxListenerDuration == 3600 && low.broadcaster.maxListenerDuration == 3600)
        #expect(station.overflow == ["http://edge.example:8001/jazz.opus"])
        #expect(station.access.allow.ranges.map(\.description) == ["10.0.0.0/8"])
        #expect(station.access.deny.ranges.map(\.description) == ["10.1.0.0/16", "2001:db8::/32"])
        #expect(station.access.denyAgents.patterns == ["*ripper*"] && station.access.geoip?.path == countriesFile)
        #expect(station.access.allowCountries == ["FR", "unknown"] && station.access.denyCountries == ["RU"])
    }

    /// `--rendition` may be repeated; each adds an output; a wrong one names what it accepts.
    @Test func renditionFlags() throws {
        let serve = try Self.serve([
            "serve", "--rendition", "low:8001:32k:mono", "--bitrate", "128k", "--rendition=mid:8002:96k",
        ])
        let renditions = serve.station.renditions
        #expect(renditions.map(\.name) == ["low", "mid"] && renditions.map(\.broadcaster.port) == [8001, 8002])
        #expect(renditions.map(\.encoder.bitrate) == [32_000, 96_000] && renditions.map(\.encoder.channels) == [1, 2])
        #expect(serve.station.encoder.bitrate == 128_000)
        let accepts = "use NAME:PORT:BITRATE or NAME:PORT:BITRATE:mono, e.g. low:8001:32k:mono"
        for bad in ["low", "low:8001", "low:0:32k", "low:8001:3k", "low:8001:32k:stereo", "a.b:8001:32k"] {
            #expect(throws: UsageError("--rendition \(bad): \(accepts)", topic: .serve)) {
                try Command.parse(["serve", "--rendition", bad])
            }
        }
        #expect(throws: UsageError.self) { try Command.parse(["serve", "--rendition", "main:8001:32k"]) }
        #expect(throws: UsageError.self) {
            try Command.parse(["serve", "--rendition", "a:8001:32k", "--rendition", "b:8001:64k"])
        }
        #expect(throws: UsageError.self) { try Command.parse(["serve", "--rendition", "a:8000:32k"]) }
    }

    /// `--push` adds a target each time it is given; a bad one is refused with its password hidden.
    @Test func pushIsRepeatable() throws {
        let serve = try Self.serve([
            "serve", "--push", "icecast://source:a@one.example/a.opus", "--push=icecast://:b@[::1]:8001/b/c.ogg",
        ])
        #expect(
            serve.station.pushes.map(\.description) == [
                "icecast://***@one.example:8000/a.opus", "icecast://***@[::1]:8001/b/c.ogg",
            ])
        #expect(serve.station.pushes.map(\.password) == ["a", "b"])
    }

    /// What `push-ca` checks for: a file with a PEM certificate in it.
    static let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

    /// `--push-ca FILE` next to `--push icecasts://…`: the file is checked as the config key's is.
    @Test func pushCAFlag() throws {
        let path = temporaryPath("ca.pem")
        try Self.pem.write(toFile: path, atomically: false, encoding: .utf8)
        defer { unlink(path) }
        let serve = try Self.serve(["serve", "--push", "icecasts://source:a@one.example/a.opus", "--push-ca", path])
        #expect(serve.station.pushCA == path)
        #expect(serve.station.pushes.map(\.description) == ["icecasts://***@one.example:8000/a.opus"])
        #expect(serve.secretsOnCommandLine == ["push"])
        #expect(
            throws: UsageError(
                "--push-ca \(path).missing: cannot be read (No such file or directory): use a readable PEM file of CA "
                    + "certificates", topic: .serve)
        ) { try Self.serve(["serve", "--push-ca", path + ".missing"]) }
    }

    @Test func theLastOfARepeatedFlagWinsAndBothFormsMix() throws {
        let serve = try Self.serve(["serve", "--port", "9000", "--port=9001", "--flush-ms=1500"])
        #expect(serve.station.broadcaster.port == 9001)
        #expect(serve.station.broadcaster.flushInterval == 1.5)
        let auto = try Self.serve(["serve", "--flush-ms", "100", "--flush-hold-ms=500", "--flush-ms=auto"])
        #expect(auto.station.broadcaster.flush == FlushPolicy(fixed: nil, hold: 0.5))
    }

    @Test(arguments: [("auto", nil), ("yes", true), ("no", false)] as [(String, Bool?)])
    func pace(text: String, paced: Bool?) throws {
        #expect(try Self.serve(["serve", "--pace", text]).station.paced == paced)
    }

    @Test(arguments: [
        ("error", Log.Priority.error), ("warning", .warning), ("notice", .notice), ("info", .info),
        ("debug", .debug),
    ])
    func logLevels(name: String, priority: Log.Priority) throws {
        #expect(try Self.serve(["serve", "--log-level", name]).logLevel == priority)
        #expect(try Self.serve(["serve", "--log-level=\(name)"]).logLevel == priority)
        #expect(try Self.serve(["--log-level", name]).logLevel == priority, "the demo")
        #expect(try Self.serve(["--log-level=\(name)"]).logLevel == priority, "the demo")
    }

    @Test func theDemoTakesItsPortAndAddress() throws {
        let demo = try Self.serve(["--port", "9000", "--bind", "127.0.0.1"])
        #expect(demo.station.broadcaster.port == 9000 && demo.station.broadcaster.bind == "127.0.0.1")
        #expect(demo.station.upstream.isEmpty)
        #expect(try Self.serve(["--port=9001", "--http", "9002"]).http?.port == 9002)
        #expect(throws: UsageError.self) { try Self.serve(["--port", "0"]) }
        #expect(throws: UsageError.self) { try Self.serve(["--port", "9000", "--http", "9000"]) }
        #expect(throws: UsageError.self) { try Self.serve(["--bitrate", "64k"]) }  // a station option needs serve
        #expect(throws: UsageError.self) { try Self.serve(["--config", "/x.conf", "--port", "9000"]) }
    }

    @Test func theDemoTakesHTTPAndStatusAddresses() throws {
        let demo = try Self.serve(["--http", "[::]:8001", "--status=127.0.0.1:9090"])
        #expect(demo.http == ListenAddress(host: "::", port: 8001) && demo.station.upstream.isEmpty)
        #expect(demo.status == ListenAddress(host: "127.0.0.1", port: 9090))
        #expect(try Self.serve(["--http", "8001"]).http?.description == "0.0.0.0:8001")
        #expect(throws: UsageError.self) { try Self.serve(["--http", "8000"]) }  // the demo station's own port
        #expect(throws: UsageError.self) { try Self.serve(["--http", "8001", "--status", "0.0.0.0:8001"]) }
        #expect(throws: UsageError.self) { try Self.serve(["--http", "nope"]) }
        #expect(throws: UsageError.self) { try Self.serve(["--config", "/x.conf", "--http", "8001"]) }
    }

    @Test func theBundledSampleStandsInForAMissingUpstream() throws {
        let demo = try Self.serve([])
        #expect(try demo.resolvedStation(sample: "/opt/demo.mp3").upstream == "/opt/demo.mp3")
        let given = try Self.serve(["serve", "--upstream", "/music/a.mp3"])
        #expect(try given.resolvedStation(sample: "/opt/demo.mp3").upstream == "/music/a.mp3")
        #expect(try given.resolvedStation(sample: nil).upstream == "/music/a.mp3")
        #expect { try demo.resolvedStation(sample: nil) } throws: { error in
            ExitCode(for: error) == .config && "\(error)".contains("--upstream")
        }
    }
}
