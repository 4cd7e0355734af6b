import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Reading access log lines back: what the server's writer writes reads back field for field, and hostile or
/// broken lines are unreadable with a reason (or saturate), never a trap.
@Suite struct AccessLogLineTests {
    static func parse(_ text: String) -> AccessLogLine.Parsed { AccessLogLine.parse(Array(text.utf8)[...]) }

    static func reason(_ text: String) -> String? {
        guard case .unreadable(let reason) = parse(text) else { return nil }
        return reason
    }

    static let good =
        "203.0.113.7 5f3a09c1-42 - [02/Dec/2026:16:03:08 +0000] \"GET /jazz.mp3 HTTP/1.1\" 200 482133 "
        + "\"-\" \"VLC/3.0.18\" 30"

    @Test func theWritersLinesReadBack() throws {
        #expect(
            Self.parse(Self.good)
                == .listener(
                    AccessLogLine(
                        address: "203.0.113.7", session: SessionKey(run: 0x5f3a_09c1, id: 42), leave: 1_796_227_388,
                        request: "GET /jazz.mp3 HTTP/1.1", status: 200, bytes: 482_133, userAgent: "VLC/3.0.18",
                        seconds: 30)))
        // Through the writer itself: escaped quotes and backslashes, a raw TCP listener, IPv6, no ID.
        let agent = "Player \"Q\" \\ 2 \\\" end"
        let record = AccessRecord(
            host: "2001:db8::1", time: 1_796_227_388.9, id: ListenerID(7), mount: "/jazz.opus",
            request: ListenerRequest(
                line: "GET /jazz/live.m3u8 HTTP/1.1", referrer: "https://x/\"y\"", userAgent: agent),
            bytes: 10, seconds: 61.7)
        guard case .listener(let line) = Self.parse(AccessLog.line(record)) else {
            Issue.record("unreadable: \(AccessLog.line(record))")
            return
        }
        #expect(line.userAgent == agent && line.request == "GET /jazz/live.m3u8 HTTP/1.1" && line.seconds == 61)
        #expect(line.session == SessionKey(run: try #require(UInt32(ListenerID.run, radix: 16)), id: 7))
        #expect(line.address == "2001:db8::1" && line.leave == 1_796_227_388)
        let raw = AccessRecord(host: "::1", time: 0, id: nil, mount: "/jazz.opus", request: nil, bytes: 0, seconds: 0)
        guard case .listener(let tcp) = Self.parse(AccessLog.line(raw) + "\r") else {
            Issue.record("unreadable: \(AccessLog.line(raw))")
            return
        }
        #expect(tcp.session == nil && tcp.request == "TCP /jazz.opus" && tcp.userAgent == "-" && tcp.leave == 0)
        #expect(ListenedLine.place(ofRequest: tcp.request) == .mount("/jazz.opus"))
    }

    @Test func markersAndComments() {
        let marker = AccessLog.droppedMarker(count: 12, time: 1_796_227_388, total: 40)
        #expect(marker.hasPrefix("# radio-relay: 12 access log lines dropped before 02/Dec/2026:16:03:08 +0000 (run "))
        #expect(Self.parse(marker) == .dropped(12))
        #expect(Self.parse(AccessLog.droppedMarker(count: 1, time: 0, total: 1)) == .dropped(1))
        #expect(Self.parse("# radio-relay: \(String(repeating: "9", count: 40)) access log lines") == .dropped(.max))
        #expect(Self.parse("# radio-relay: many access log lines dropped") == .comment)
        #expect(Self.parse("# Version: 1.0") == .comment && Self.parse("") == .comment && Self.parse("\r") == .comment)
    }

    @Test func placesOfRequests() {
        #expect(ListenedLine.place(ofRequest: "GET /jazz.mp3?x=1 HTTP/1.1") == .mount("/jazz.mp3"))
        #expect(ListenedLine.place(ofRequest: "GET /jazz/master.m3u8 HTTP/1.1") == .mount("/jazz/"))
        #expect(ListenedLine.place(ofRequest: "GET /jazz.hq/live.m3u8 HTTP/1.0") == .mount("/jazz.hq/"))
        #expect(ListenedLine.place(ofRequest: "GET /jazz/events HTTP/1.1") == .titleEvents)
        #expect(ListenedLine.place(ofRequest: "GET /events HTTP/1.1") == .titleEvents)
        #expect(ListenedLine.place(ofRequest: "TCP -") == nil && ListenedLine.place(ofRequest: "GET") == nil)
        #expect(ListenedLine.place(ofRequest: "GET http://host/x HTTP/1.1") == nil)
    }

    /// Each broken field names itself; huge numbers saturate (bytes) or are refused (seconds past 1970).
    @Test(arguments: [
        ("garbage", "no address"),
        (
            "h x - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 3",
            "the identity field is neither - nor RUN-ID"
        ),
        (
            "h 5f3a09c1-0x1 - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 3",
            "the identity field is neither - nor RUN-ID"
        ),
        (
            "h +f3a09c1-1 - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 3",
            "the identity field is neither - nor RUN-ID"
        ),
        ("h - - [31/Apr/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 3", "no such date"),
        ("h - - [29/Feb/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 3", "no such date"),
        ("h - - [02/Dec/2026:24:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 3", "no such date"),
        ("h - - [02/Dec/1969:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 3", "no such date"),
        ("h - - [01/Jan/1970:00:00:00 +0100] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 0", "a date before 1970"),
        ("h - - [02/Dex/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 3", "bad date"),
        ("h - - [2/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 3", "bad date"),
        ("h - - [02/Dec/2026:16:03:08 +0000]", "no quoted request"),
        ("h - - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1 200 1 \"-\" \"-\" 3", "bad status"),
        ("h - - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 20 1 \"-\" \"-\" 3", "bad status"),
        ("h - - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 -5 \"-\" \"-\" 3", "no quoted referrer"),
        ("h - - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" -5", "bad seconds field"),
        ("h - - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 3 extra", "more after the seconds"),
        (
            "h - - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 9223372036854775808",
            "connected since before 1970"
        ),
        (
            "h - - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" 1796227389",
            "connected since before 1970"
        ),
        ("h - - [02/Dec/2026:16:03:08 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"a\\", "no quoted user agent"),
    ])
    func brokenLinesSayWhy(line: String, reason: String) {
        #expect(Self.reason(line) == reason)
    }

    /// Fields of any size or content: bounded, and never a trap.
    @Test func hostileFieldsNeverTrap() throws {
        let prefix = "h 5f3a09c1-1 - [02/Dec/2026:16:03:08 -0130] \"GET /a HTTP/1.1\" 200 "
        // Bytes of 2^63 and of 400 digits saturate; the line stays readable.
        for bytes in ["9223372036854775808", String(repeating: "9", count: 400)] {
            guard case .listener(let line) = Self.parse(prefix + bytes + " \"-\" \"-\" 1796232000") else {
                Issue.record("unreadable with \(bytes.count) digits of bytes")
                continue
            }
            #expect(line.bytes == .max && line.leave == 1_796_227_388 + 5_400 && line.seconds == 1_796_232_000)
        }
        // A quoted field over the limit; escaped quotes inside one; a user agent full of them.
        let huge = String(repeating: "x", count: AccessLogLine.fieldLimit + 1)
        #expect(Self.reason(prefix + "1 \"-\" \"\(huge)\" 3") == "no quoted user agent")
        let quotes = String(repeating: "\\\"", count: AccessLogLine.fieldLimit / 2)
        guard case .listener(let line) = Self.parse(prefix + "1 \"\\\\\" \"\(quotes)\" 3") else {
            Issue.record("escaped quotes unreadable")
            return
        }
        #expect(line.userAgent == String(repeating: "\"", count: AccessLogLine.fieldLimit / 2))
        // Every prefix of a good line, and bytes of every value in each place: unreadable or read, never a trap.
        let good = Array(Self.good.utf8)
        for end in 0..<good.count { _ = AccessLogLine.parse(good[0..<end]) }
        var random = SplitMix64(seed: 17)
        for _ in 0..<2_000 {
            var bytes = good
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            _ = AccessLogLine.parse(bytes[...])
        }
        #expect(CivilDate.days(year: 2024, month: 2, day: 29) == 19_782)
        #expect(CivilDate.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilDate.days(year: 9999, month: 12, day: 31) == 2_932_896)
    }
}
