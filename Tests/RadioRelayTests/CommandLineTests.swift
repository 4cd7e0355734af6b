import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The command line as a value: every flag in both forms, every usage error's message, help per command, and the
/// exit status for each kind of error; then the real binary once for each status the parser and main produce.
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

    static func help(_ arguments: [String]) throws -> HelpTopic? {
        guard case .help(let topic) = try Command.parse(arguments) else { return nil }
        return topic
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
        let pairs = [
            ("upstream", "http://example.com/stream.mp3"), ("port", "9000"), ("bind", "::"), ("bitrate", "128k"),
            ("page-ms", "20"), ("flush-ms", "0"), ("flush-hold-ms", "450"), ("burst", "0.5"), ("max-lag", "30"),
            ("max-lead", "2.5"),
            ("max-listeners", "5"),
            ("max-per-ip", "2"), ("complexity", "3"), ("pace", "yes"), ("reconnect-max", "120"), ("name", "jazz"),
            ("chain-titles", "yes"), ("log-level", "debug"), ("channels", "1"), ("mount", "/live.opus"),
            ("rendition", "low:9001:32k:mono"), ("display-name", "Jazz FM"), ("description", "All jazz"),
            ("genre", "jazz"), ("url", "https://jazz.example.org/"), ("http", "8001"), ("status", "[::1]:8080"),
            ("network-threads", "3"), ("hls", "no"), ("hls-segment", "4.5"), ("hls-window", "10"),
            ("mp3", "yes"), ("mp3-port", "9002"), ("access-log", "/var/log/radio-relay/access.log"),
            ("proxy-protocol", "yes"), ("proxy-from", "10.0.0.0/8, ::1"),
            ("push", "icecast://source:hackme@icecast.example:8000/jazz.opus"), ("push-ca", caFile),
            ("connect-timeout", "3"), ("stall-timeout", "4"), ("standby", "hot"), ("dead-air", "5"),
            ("dead-air-level", "-40"), ("recover", "20"), ("crossfade", "1.5"), ("title", "Station ID"),
            ("source-password", "hackme-live-1"), ("source-timeout", "7"), ("peer-timeout", "45"),
        ]
        // --config replaces the station flags; ConfigFileCommandTests covers it.
        let flags = Set(OptionSpecification.serve.map(\.name)).subtracting(["config"])
        #expect(Set(pairs.map(\.0)) == flags, "a flag is not tested")
        let serve = try Self.serve(["serve"] + Self.flags(pairs, joined: joined))
        let station = serve.station
        #expect(station.upstream == "http://example.com/stream.mp3")
        #expect(station.mountPath == "/live.opus" && station.info.displayName == "Jazz FM")
        #expect(station.info.description == "All jazz" && station.info.genre == "jazz")
        #expect(station.info.url == "https://jazz.example.org/")
        #expect(serve.http == ListenAddress(host: "0.0.0.0", port: 8001))
        #expect(serve.status == ListenAddress(host: "::1", port: 8080))
        #expect(serve.networkThreads == 3)
        #expect(try Self.serve(["serve", "--network-threads", "auto"]).networkThreads == nil)
        #expect(station.broadcaster.port == 9000 && station.broadcaster.bind == "::")
        #expect(station.encoder.bitrate == 128_000 && station.encoder.pageDuration == 20)
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
        #expect(station.failover == failover)
        #expect(station.sourcePassword == SourcePassword("hackme-live-1") && station.sourceTimeout == 7)
        #expect(station.peerTimeout == 45 && station.outputSettings.allSatisfy { $0.broadcaster.peerTimeout == 45 })
        #expect(station.inputs.first?.isLive == true && station.inputs.first?.name == "live")
        #expect(serve.logLevel == .debug)
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
        #expect(low.broadcaster.bind == "::" && low.encoder.pageDuration == 20 && low.broadcaster.maxListeners == 5)
        #expect(low.encoder.serial != station.encoder.serial)
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

    // MARK: - transcode

    @Test func transcodeDefaults() throws {
        let (input, output, options) = try Self.transcode(["transcode", "in.mp3", "out.opus"])
        #expect(input == "in.mp3" && output == "out.opus")
        #expect(options.encoder.bitrate == 96_000 && options.encoder.complexity == 10)
        #expect(options.encoder.pageDuration == 100 && options.commonRate == 48_000)
    }

    @Test(arguments: [false, true]) func transcodeReadsEveryFlag(joined: Bool) throws {
        let pairs = [("bitrate", "64000"), ("rate", "44100"), ("complexity", "0"), ("page-ms", "1000")]
        #expect(Set(pairs.map(\.0)) == Set(OptionSpecification.transcode.map(\.name)), "a flag is not tested")
        let flags = Self.flags(pairs, joined: joined)
        let (input, output, options) = try Self.transcode(
            ["transcode"] + flags.prefix(2) + ["in.mp3"]
                + flags.dropFirst(2) + ["-"])
        #expect(input == "in.mp3" && output == "-")
        #expect(options.encoder.bitrate == 64_000 && options.commonRate == 44_100)
        #expect(options.encoder.complexity == 0 && options.encoder.pageDuration == 1000)
    }

    @Test func aDoubleDashEndsTheOptions() throws {
        let (input, output, _) = try Self.transcode(["transcode", "--", "--odd name.mp3", "-"])
        #expect(input == "--odd name.mp3" && output == "-")
    }

    // MARK: - Usage errors

    /// Each wrong command line: the one-line message, naming the flag and what it accepts, and the help it points to.
    @Test(
        arguments: [
            (["frob"], "unknown command frob: use serve, transcode, check-config or status", HelpTopic.overall),
            (["--bitrate", "64k"], "unknown option --bitrate", .overall),
            (["--log-level", "loud"], "--log-level loud: use error, warning, notice, info or debug", .overall),
            (["--log-level"], "--log-level needs a value: error, warning, notice, info or debug", .overall),
            (["--version", "x"], "--version takes no arguments", .overall),
            (["help", "frob"], "no help for frob: use serve, transcode, check-config or status", .overall),
            (["-x"], "unknown option -x", .overall),
            (["serve", "--bogus", "1"], "unknown option --bogus", .serve),
            (["serve", "--rate=44100"], "unknown option --rate", .serve),
            (["serve", "extra"], "serve takes only options, not extra", .serve),
            (["serve", "--upstream"], "--upstream needs a value: an http(s) URL, a file: URL or a path", .serve),
            (["serve", "--name="], "--name needs a value: a non-empty name", .serve),
            (["serve", "--port", "0"], "--port 0: use 1 to 65535", .serve),
            (["serve", "--port=65536"], "--port 65536: use 1 to 65535", .serve),
            (["serve", "--port", "eighty"], "--port eighty: use 1 to 65535", .serve),
            (
                ["serve", "--bind", "localhost"], "--bind localhost: use an IPv4 or IPv6 address such as 0.0.0.0 or ::",
                .serve
            ),
            (["serve", "--bitrate", "5k"], "--bitrate 5k: use 6k to 510k, e.g. 96k or 96000", .serve),
            (["serve", "--bitrate", "fast"], "--bitrate fast: use 6k to 510k, e.g. 96k or 96000", .serve),
            (["serve", "--page-ms", "30"], "--page-ms 30: use a multiple of 20 from 20 to 1000", .serve),
            (["serve", "--page-ms", "1020"], "--page-ms 1020: use a multiple of 20 from 20 to 1000", .serve),
            (["serve", "--flush-ms", "2001"], "--flush-ms 2001: use auto or 0 to 2000", .serve),
            (["serve", "--flush-ms", "fast"], "--flush-ms fast: use auto or 0 to 2000", .serve),
            (["serve", "--flush-hold-ms", "-1"], "--flush-hold-ms -1: use 0 to 2000", .serve),
            (["serve", "--network-threads", "0"], "--network-threads 0: use auto or 1 to 64", .serve),
            (["serve", "--network-threads", "65"], "--network-threads 65: use auto or 1 to 64", .serve),
            (["serve", "--burst", "61"], "--burst 61: use 0 to 60 seconds", .serve),
            (["serve", "--burst", "inf"], "--burst inf: use 0 to 60 seconds", .serve),
            (["serve", "--max-lag", "0.4"], "--max-lag 0.4: use 0.5 to 600 seconds", .serve),
            (["serve", "--max-lag", "nan"], "--max-lag nan: use 0.5 to 600 seconds", .serve),
            (["serve", "--max-lead", "0.1"], "--max-lead 0.1: use 0.2 to 30 seconds", .serve),
            (["serve", "--max-listeners", "-1"], "--max-listeners -1: use 0 to 1000000", .serve),
            (["serve", "--max-per-ip", "1000001"], "--max-per-ip 1000001: use 0 to 1000000", .serve),
            (["serve", "--complexity", "11"], "--complexity 11: use 0 to 10", .serve),
            (["serve", "--pace", "maybe"], "--pace maybe: use auto, yes or no", .serve),
            (
                ["serve", "--push", "icecast://source:secret@host"],
                "--push icecast://***@host: the URL has no mount: add one, as in "
                    + "icecast://source:PASSWORD@HOST:PORT/MOUNT", .serve
            ),
            (
                ["serve", "--push", "http://source:secret@host/a"],
                "--push http://***@host/a: not an icecast:// or icecasts:// (TLS) URL: write "
                    + "icecast://source:PASSWORD@HOST:PORT/MOUNT", .serve
            ),
            (
                ["serve", "--push", "icecast://u:p@a/x.opus", "--push", "icecast://v:q@A:8000/x.opus"],
                "station main: pushes twice to icecast://***@A:8000/x.opus: Icecast takes one source per mount",
                .serve
            ),
            (
                ["serve", "--log-level", "trace"], "--log-level trace: use error, warning, notice, info or debug",
                .serve
            ),
            (["transcode"], "transcode needs 2 arguments, INPUT and OUTPUT; got 0", .transcode),
            (["transcode", "a", "b", "c"], "transcode needs 2 arguments, INPUT and OUTPUT; got 3", .transcode),
            (["transcode", "a", "b", "--upstream", "x"], "unknown option --upstream", .transcode),
            (
                ["transcode", "a", "b", "--bitrate", "600k"], "--bitrate 600k: use 6k to 510k, e.g. 96k or 96000",
                .transcode
            ),
            (["transcode", "a", "b", "--rate", "22050"], "--rate 22050: use 48000 or 44100", .transcode),
            (["transcode", "a", "b", "--complexity=-1"], "--complexity -1: use 0 to 10", .transcode),
            (
                ["transcode", "a", "b", "--page-ms", "30"], "--page-ms 30: use a multiple of 20 from 20 to 1000",
                .transcode
            ),
            (
                ["transcode", "a", "b", "--page-ms"], "--page-ms needs a value: a multiple of 20 from 20 to 1000",
                .transcode
            ),
        ] as [([String], String, HelpTopic)])
    func usageError(arguments: [String], message: String, topic: HelpTopic) {
        #expect(throws: UsageError(message, topic: topic)) { try Command.parse(arguments) }
    }

    @Test func theHintNamesTheHelpOfTheCommand() {
        #expect(UsageError("x", topic: .overall).hint == "try `radio-relay --help`")
        #expect(UsageError("x", topic: .serve).hint == "try `radio-relay serve --help`")
        #expect(UsageError("x", topic: .transcode).hint == "try `radio-relay transcode --help`")
    }

    // MARK: - Help and version

    @Test(
        arguments: [
            (["--help"], HelpTopic.overall), (["-h"], .overall), (["help"], .overall),
            (["--log-level", "info", "-h"], .overall),
            (["help", "serve"], .serve), (["serve", "--help"], .serve), (["serve", "-h"], .serve),
            (["serve", "--port", "9000", "--help"], .serve), (["serve", "--help", "--bogus"], .serve),
            (["help", "transcode"], .transcode), (["transcode", "--help"], .transcode),
            (["transcode", "a", "-h"], .transcode),
        ] as [([String], HelpTopic)])
    func help(arguments: [String], topic: HelpTopic) throws {
        #expect(try Self.help(arguments) == topic)
    }

    @Test func eachHelpShowsOnlyItsOwnOptions() {
        let serve = HelpTopic.serve.text
        let transcode = HelpTopic.transcode.text
        for option in OptionSpecification.serve { #expect(serve.contains(option.synopsis)) }
        for option in OptionSpecification.transcode { #expect(transcode.contains(option.synopsis)) }
        #expect(!serve.contains("--rate") && !serve.contains("INPUT"))
        #expect(!transcode.contains("--upstream") && !transcode.contains("--port"))
        #expect(serve.hasPrefix("usage: radio-relay serve"))
        #expect(transcode.hasPrefix("usage: radio-relay transcode"))
        let overall = HelpTopic.overall.text
        #expect(overall.contains("radio-relay serve [options]") && overall.contains("radio-relay transcode"))
        #expect(overall.contains("serve --help") && overall.contains("--log-level"))
        for code in ExitCode.allCases where code != .ok { #expect(overall.contains("\(code.rawValue) ")) }
        for text in [serve, transcode, overall] {
            #expect(text.split(separator: "\n").allSatisfy { $0.count <= 120 })
        }
    }

    @Test func version() throws {
        guard case .version = try Command.parse(["--version"]) else {
            Issue.record("--version is not .version")
            return
        }
    }

    // MARK: - Exit codes

    struct Unplanned: Error {}

    @Test(arguments: [
        (UsageError("x", topic: .serve) as any Error, ExitCode.usage),
        (ConfigurationError("bind address x is not an IPv4 or IPv6 address"), .config),
        (OutputError(path: "/x.opus", message: "cannot create: No such file or directory"), .cantCreate),
        (TranscodeError.notMP3(input: "x", bytes: 1 << 20), .dataError),
        (DownloadError(.file, url: "/x.mp3", "cannot open /x.mp3"), .noInput),
        (DownloadError(.badURL, url: "gopher://x", "unsupported URL scheme"), .noInput),
        (DownloadError(.httpStatus(404), url: "http://x", "the server answered HTTP 404"), .noInput),
        (DownloadError(.httpStatus(503), url: "http://x", "the server answered HTTP 503"), .unavailable),
        (DownloadError(.transfer, url: "http://x", "connection refused"), .unavailable),
        (SystemError("bind 0.0.0.0:8000", errno: EADDRINUSE), .unavailable),
        (SystemError("bind 192.0.2.1:8000", errno: EADDRNOTAVAIL), .unavailable),
        (SystemError("bind 0.0.0.0:80", errno: EACCES), .noPermission),
        (SystemError("eventfd", errno: EMFILE), .osError),
        (Unplanned(), .software),
    ])
    func exitCode(error: any Error, code: ExitCode) {
        #expect(ExitCode(for: error) == code)
    }

    @Test func exitCodesAreTheSysexitsValues() {
        let values = Dictionary(uniqueKeysWithValues: ExitCode.allCases.map { ("\($0)", $0.rawValue) })
        #expect(
            values == [
                "ok": 0, "usage": 64, "dataError": 65, "noInput": 66, "unavailable": 69, "software": 70,
                "osError": 71, "cantCreate": 73, "noPermission": 77, "config": 78,
            ])
    }
}
