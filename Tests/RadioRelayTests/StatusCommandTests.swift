import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `radio-relay status`: its command line, and its verdict and table as a pure function of `/status.json` — a
/// Nagios plugin's exit statuses (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN).
@Suite struct StatusCommandTests {
    /// A station as its server shows it: outputs `main` (with its listeners and 4 HLS players) and `low`.
    static func station(
        _ name: String, alive: Bool = true, upstream: StationState.Upstream = .connected, playing: String? = "1",
        inputs: [(String, InputKind)] = [("1", .http), ("2", .http)], listeners: Int = 3, http: Int = 1
    ) -> StationStatus {
        var station = StationStatus(name: name)
        station.alive = alive
        station.upstream = upstream
        station.playingInput = playing
        station.uptime = 3725
        station.title = "Song"
        var main = OutputStatus(rendition: "main")
        main.listeners = listeners
        main.httpListeners = http
        main.opusBitrate = 96_000
        var hls = HLSStatus()
        hls.players = 4
        main.hls = hls
        station.outputs = [main, OutputStatus(rendition: "low")]
        station.inputs = inputs.map {
            InputState(
                name: $0.0, kind: $0.1, url: "", state: .standby, reason: nil, since: 0, connected: false, title: nil,
                bytesIn: 0, reconnects: 0)
        }
        return station
    }

    /// The verdict and table as the command makes them: from the server's JSON of `stations`, decoded into the
    /// same schema.
    static func verdict(_ stations: [StationStatus]) -> (StatusCommand.Verdict, String) {
        let json = StatusReport.json(StatusSnapshot(stations: stations))
        do {
            return StatusTable.report(try JSONDecoder().decode(StatusSnapshot.self, from: Data(json.utf8)))
        } catch {
            Issue.record("the server's JSON does not decode: \(StatusCommand.why(error))")
            return (.down, "")
        }
    }

    @Test func verdicts() {
        #expect(Self.verdict([Self.station("a"), Self.station("b")]).0 == .ok)
        let (retrying, text) = Self.verdict([
            Self.station("a"), Self.station("b", upstream: .retrying(reason: "refused")),
        ])
        #expect(retrying == .degraded && text.hasPrefix("radio-relay WARNING: 2 stations, 14 listeners; b is retrying"))
        #expect(Self.verdict([Self.station("a", playing: "2")]).0 == .degraded, "a lower input plays")
        #expect(
            Self.verdict([Self.station("a", alive: false), Self.station("b", upstream: .retrying(reason: ""))]).0
                == .down)
        #expect(Self.verdict([]).0 == .down, "no station")
        // A live source above the inputs is no degradation; a live-only station waiting for its source is fine.
        let live: [(String, InputKind)] = [("live", .live), ("1", .http)]
        #expect(Self.verdict([Self.station("a", playing: "live", inputs: live)]).0 == .ok)
        #expect(Self.verdict([Self.station("a", playing: "1", inputs: live)]).0 == .ok)
        #expect(
            Self.verdict([
                Self.station("a", upstream: .retrying(reason: "x"), playing: "live", inputs: [("live", .live)])
            ]).0 == .ok)
    }

    /// The wire format is a contract with what reads it (this command, dashboards, the scripts of `bench/`): a
    /// `/status.json` this version's server wrote (`Tests/Fixtures/status.json`: the demo station with a raw and an
    /// HTTP listener) decodes into the schema, gives its verdict and table, and the schema writes it back with the
    /// same keys, key for key. A key renamed in the schema alone fails here.
    @Test func aDocumentTheServerWroteReadsBackKeyForKey() throws {
        let document = try Data(contentsOf: URL(fileURLWithPath: Fixture.path("status.json")))
        let snapshot = try JSONDecoder().decode(StatusSnapshot.self, from: document)
        let (verdict, text) = StatusTable.report(snapshot)
        #expect(verdict == .ok, "\(text)")
        let row = "main     ok     1      1/1/0                   radio-relay demo  96k      0m06s"
        #expect(text.split(separator: "\n").last.map(String.init) == row, "\(text)")
        #expect(snapshot.listeners.map(\.id) == [ListenerID(1), ListenerID(2)] && snapshot.listenersTotal == 2)
        let written = Data(StatusReport.json(snapshot).utf8)
        let (read, wrote) = (try Self.keyPaths(document), try Self.keyPaths(written))
        #expect(read.subtracting(wrote).sorted() == [], "in the document, not written back")
        #expect(wrote.subtracting(read).sorted() == [], "written back, not in the document")
        #expect(read.count > 100, "\(read.count) keys")
    }

    /// Every key path of a JSON document (`stations[].inputs[].name`), arrays' elements taken together.
    static func keyPaths(_ data: Data) throws -> Set<String> {
        var paths: Set<String> = []
        func walk(_ value: Any, _ path: String) {
            if let object = value as? [String: Any] {
                for (key, inner) in object {
                    paths.insert(path + "." + key)
                    walk(inner, path + "." + key)
                }
            } else if let array = value as? [Any] {
                for inner in array { walk(inner, path + "[]") }
            }
        }
        walk(try JSONSerialization.jsonObject(with: data), "")
        return paths
    }

    @Test func theTable() {
        let (_, text) = Self.verdict([
            Self.station("main"), Self.station("jazz-hd", playing: "2", listeners: 120, http: 20),
        ])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[1].hasPrefix("STATION  STATE     INPUT  LISTENERS raw/http/hls  TITLE  BITRATE  UPTIME"))
        #expect(lines[2] == "main     ok        1      2/1/4                   Song   96k      1h02m")
        #expect(lines[3] == "jazz-hd  degraded  2      100/20/4                Song   96k      1h02m")
        #expect(StatusTable.duration(59) == "0m59s" && StatusTable.duration(90_061) == "1d1h")
        #expect(StatusTable.duration(.nan) == "-" && StatusTable.duration(-1) == "-")
    }

    @Test func theCommandLine() throws {
        guard case .status(let plain) = try Command.parse(["status"]) else {
            Issue.record("not status")
            return
        }
        #expect(plain == StatusCommand())
        guard
            case .status(let full) = try Command.parse([
                "status", "--url", "http://127.0.0.1:9090/", "--token-file", "/run/token", "--json",
            ])
        else {
            Issue.record("not status")
            return
        }
        #expect(full.url == "http://127.0.0.1:9090/" && full.tokenFile == "/run/token" && full.json)
        #expect(try full.endpoint() == ("127.0.0.1", 9090))
        #expect(StatusCommand.hostAndPort("[::1]:8080")! == ("::1", 8080))
        #expect(StatusCommand.hostAndPort("host") == nil && StatusCommand.hostAndPort("host:0") == nil)
        for wrong in [["status", "--url", "https://x:1"], ["status", "--url", "nohost"], ["status", "extra"]] {
            #expect(throws: UsageError.self) { try Command.parse(wrong) }
            do {
                _ = try Command.parse(wrong)
            } catch {
                #expect(error.topic == .status, "a usage error of status exits 3")
            }
        }
        guard case .help(let topic) = try Command.parse(["status", "--help"]) else {
            Issue.record("status --help is not help")
            return
        }
        #expect(topic == .status)
    }

    /// A hostile or broken server: numbers that overflow or are negative, strings with terminal escapes and a forged
    /// second line of plugin output, an input an operator forced (OK, with a note).
    @Test func hostileFixtures() {
        var huge = Self.station("a", listeners: Int.max, http: Int.max)
        huge.outputs[0].hls?.players = Int.max
        var negativePlayers = HLSStatus()
        negativePlayers.players = -5
        huge.outputs[1].hls = negativePlayers
        let (verdict, text) = Self.verdict([huge, Self.station("b", listeners: Int.max, http: -1)])
        #expect(verdict == .ok)
        #expect(text.hasPrefix("radio-relay OK: 2 stations, \(Int.max) listeners"), "\(text)")
        #expect(text.contains("0/\(Int.max)/\(Int.max)") && text.contains("\(Int.max)/0/4"), "\(text)")
        var negative = Self.station("c", listeners: -3, http: 7)
        negative.uptime = 1e300
        negative.outputs[0].opusBitrate = -96_000
        let shownNegative = Self.verdict([negative]).1
        #expect(shownNegative.contains("0/0/4") && !shownNegative.contains("-96k"), "\(shownNegative)")

        var forged = Self.station("evil\u{1B}]0;pwned\u{07}\nradio-relay OK | load=0;;;", playing: "\u{1B}[2J2")
        forged.title = "\u{9B}31mred\r\ntitle|x=1"
        forged.upstream = .retrying(reason: "refused\n\u{1B}[1Aup")
        let (_, shown) = Self.verdict([forged])
        #expect(shown.split(separator: "\n").count == 3, "the summary, the header and one row: \(shown)")
        #expect(!shown.unicodeScalars.contains { $0 != "\n" && Sanitized.isUnsafe($0) }, "\(shown.debugDescription)")
        #expect(!shown.contains("|"), "no performance data of the server's making: \(shown)")
        #expect(shown.hasPrefix("radio-relay WARNING: 1 station, 7 listeners; evil]0;pwnedradio-relay OK ¦ load=0;;;"))
        #expect(StatusTable.printable("{\"a\":\"\u{1B}[2J\"}\n\tb\u{9B}", keepingLines: true) == "{\"a\":\"[2J\"}\n\tb")

        // Forcing a lower input is an operator's act: OK with a note, not a page for the on-call.
        var forced = Self.station("main", playing: "2")
        forced.forcedInput = "2"
        let (forcedVerdict, forcedText) = Self.verdict([forced])
        #expect(forcedVerdict == .ok && forcedText.contains("note: main plays input 2, forced by an operator"))
        #expect(Self.verdict([Self.station("main", playing: "2")]).0 == .degraded, "not forced: degraded")
        // A standby that cannot work: degraded, with why.
        var broken = Self.station("main", inputs: [("1", .http), ("fallback", .file)])
        broken.inputs[0].state = .playing
        broken.inputs[1].state = .failed
        broken.inputs[1].reason = "cannot read /srv/id.mp3\u{1B}[2J"
        let (brokenVerdict, brokenText) = Self.verdict([broken])
        #expect(brokenVerdict == .degraded)
        #expect(
            brokenText.hasPrefix(
                "radio-relay WARNING: 1 station, 7 listeners; main has input fallback failed (cannot read /srv/id.mp3[2J)"
            ), "\(brokenText)")
    }

    /// An answer that is not this version's status JSON (a field of the wrong type, a missing one, not JSON at
    /// all) is refused as a whole, saying where.
    @Test func anAnswerOfAnotherShapeIsRefusedSayingWhere() throws {
        let good = StatusReport.json(StatusSnapshot(stations: [Self.station("a")]))
        #expect(throws: Never.self) { try JSONDecoder().decode(StatusSnapshot.self, from: Data(good.utf8)) }
        let wrongType = good.replacingOccurrences(of: "\"opus_bitrate\":96000", with: "\"opus_bitrate\":\"x\"")
        #expect(wrongType != good)
        for (text, said) in [
            (wrongType, "stations.0.outputs.0.opus_bitrate"),
            (good.replacingOccurrences(of: "\"alive\":true,", with: ""), "no stations.0.alive"),
            ("<html>", "not JSON"),
        ] {
            do {
                _ = try JSONDecoder().decode(StatusSnapshot.self, from: Data(text.utf8))
                Issue.record("decoded: \(text.prefix(80))")
            } catch {
                #expect(StatusCommand.why(error).contains(said), "\(StatusCommand.why(error))")
            }
        }
    }

    /// A server that drips a byte a second never finishes an answer: the command gives up at its one overall
    /// deadline, not after a timeout per read.
    @Test(.timeLimit(.minutes(1))) func aDripServerMeetsTheDeadline() throws {
        let server = try HTTPTestServer { _ in .init(body: Array(repeating: UInt8(ascii: "{"), count: 60), pace: 1) }
        defer { server.stop() }
        let started = monotonicNow()
        #expect {
            _ = try StatusFetch.get(host: "127.0.0.1", port: Int(server.port), path: "/", token: nil, timeout: 2)
        } throws: { "\($0)" == "no complete answer within 2 s" }
        let elapsed = monotonicNow() - started
        #expect(elapsed >= 1.9 && elapsed < 3, "gave up after \(elapsed) s")
    }
}
