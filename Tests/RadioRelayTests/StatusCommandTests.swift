import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelaySystem

/// `radio-relay status`: its command line, and its verdict and table as a pure function of `/status.json` — a
/// Nagios plugin's exit statuses (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN).
@Suite struct StatusCommandTests {
    static func station(
        _ name: String, alive: Bool = true, state: String = "connected", playing: String? = "1",
        inputs: [(String, String)] = [("1", "http"), ("2", "http")], listeners: Int = 3, http: Int = 1
    ) -> [String: Any] {
        [
            "name": name, "alive": alive, "upstream_state": state,
            "upstream_reason": state == "retrying" ? "refused" : NSNull(),
            "input_playing": playing as Any, "listeners": listeners, "listeners_http": http, "opus_bitrate": 96_000,
            "uptime_seconds": 3725.0, "title": "Song",
            "inputs": inputs.map { ["name": $0.0, "kind": $0.1] },
            "outputs": [["hls": ["players": 4]], ["hls": NSNull()]],
        ]
    }

    static func verdict(_ stations: [[String: Any]]) -> (StatusCommand.Verdict, String) {
        StatusTable.report(["stations": stations])
    }

    @Test func verdicts() {
        #expect(Self.verdict([Self.station("a"), Self.station("b")]).0 == .ok)
        let (retrying, text) = Self.verdict([Self.station("a"), Self.station("b", state: "retrying")])
        #expect(retrying == .degraded && text.hasPrefix("radio-relay WARNING: 2 stations, 14 listeners; b is retrying"))
        #expect(Self.verdict([Self.station("a", playing: "2")]).0 == .degraded, "a lower input plays")
        #expect(Self.verdict([Self.station("a", alive: false), Self.station("b", state: "retrying")]).0 == .down)
        #expect(Self.verdict([]).0 == .down, "no station")
        // A live source above the inputs is no degradation; a live-only station waiting for its source is fine.
        let live = [("live", "live"), ("1", "http")]
        #expect(Self.verdict([Self.station("a", playing: "live", inputs: live)]).0 == .ok)
        #expect(Self.verdict([Self.station("a", playing: "1", inputs: live)]).0 == .ok)
        #expect(
            Self.verdict([Self.station("a", state: "retrying", playing: "live", inputs: [("live", "live")])]).0 == .ok)
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
        huge["outputs"] = [["hls": ["players": Int.max]], ["hls": ["players": -5]]]
        let (verdict, text) = Self.verdict([huge, Self.station("b", listeners: Int.max, http: -1)])
        #expect(verdict == .ok)
        #expect(text.hasPrefix("radio-relay OK: 2 stations, \(Int.max) listeners"), "\(text)")
        #expect(text.contains("0/\(Int.max)/\(Int.max)") && text.contains("\(Int.max)/0/4"), "\(text)")
        var negative = Self.station("c", listeners: -3, http: 7)
        negative["uptime_seconds"] = 1e300
        negative["opus_bitrate"] = "x"
        #expect(Self.verdict([negative]).1.contains("0/0/4"))

        var forged = Self.station("evil\u{1B}]0;pwned\u{07}\nradio-relay OK | load=0;;;", playing: "\u{1B}[2J2")
        forged["title"] = "\u{9B}31mred\r\ntitle|x=1"
        forged["upstream_state"] = "retrying"
        forged["upstream_reason"] = "refused\n\u{1B}[1Aup"
        let (_, shown) = Self.verdict([forged])
        #expect(shown.split(separator: "\n").count == 3, "the summary, the header and one row: \(shown)")
        #expect(!shown.unicodeScalars.contains { $0 != "\n" && Sanitized.isUnsafe($0) }, "\(shown.debugDescription)")
        #expect(!shown.contains("|"), "no performance data of the server's making: \(shown)")
        #expect(shown.hasPrefix("radio-relay WARNING: 1 station, 7 listeners; evil]0;pwnedradio-relay OK ¦ load=0;;;"))
        #expect(StatusTable.printable("{\"a\":\"\u{1B}[2J\"}\n\tb\u{9B}", keepingLines: true) == "{\"a\":\"[2J\"}\n\tb")

        // Forcing a lower input is an operator's act: OK with a note, not a page for the on-call.
        var forced = Self.station("main", playing: "2")
        forced["input_forced"] = "2"
        let (forcedVerdict, forcedText) = Self.verdict([forced])
        #expect(forcedVerdict == .ok && forcedText.contains("note: main plays input 2, forced by an operator"))
        #expect(Self.verdict([Self.station("main", playing: "2")]).0 == .degraded, "not forced: degraded")
        // A standby that cannot work: degraded, with why.
        var broken = Self.station("main")
        broken["inputs"] = [
            ["name": "1", "kind": "http", "state": "playing"],
            ["name": "fallback", "kind": "file", "state": "failed", "reason": "cannot read /srv/id.mp3\u{1B}[2J"],
        ]
        let (brokenVerdict, brokenText) = Self.verdict([broken])
        #expect(brokenVerdict == .degraded)
        #expect(
            brokenText.hasPrefix(
                "radio-relay WARNING: 1 station, 7 listeners; main has input fallback failed (cannot read /srv/id.mp3[2J)"
            ), "\(brokenText)")
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
