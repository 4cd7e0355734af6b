import Foundation
import Testing

@testable import RadioRelay

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
        if case .help(let topic) = try Command.parse(["status", "--help"]) { #expect(topic == .status) }
    }
}
