import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The access log: its lines in Icecast's combined format, and a real file written by its own thread.
@Suite struct AccessLogTests {
    @Test func linesAreTheCombinedFormatWithEveryURLRedacted() {
        let request = ListenerRequest(
            line: "GET /jazz.mp3 HTTP/1.1", referrer: Redaction.text("https://fan:secret@radio.example/play?key=abc"),
            userAgent: "VLC/3.0.18 \"quoted\" \\ back", metaInterval: 16_000)
        // 2026-12-02 16:03:08 UTC.
        let http = AccessRecord(
            host: "203.0.113.7", time: 1_796_227_388.75, request: request, bytes: 482_133, seconds: 30.9)
        #expect(
            AccessLog.line(http)
                == "203.0.113.7 - - [02/Dec/2026:16:03:08 +0000] \"GET /jazz.mp3 HTTP/1.1\" 200 482133 "
                + "\"https://***@radio.example/play?key=***\" \"VLC/3.0.18 \\\"quoted\\\" \\\\ back\" 30")
        // A raw TCP listener sent no request: "-" where the request, referrer and agent would be.
        let raw = AccessRecord(host: "::1", time: 0, request: nil, bytes: 10, seconds: 0.2)
        #expect(AccessLog.line(raw) == "::1 - - [01/Jan/1970:00:00:00 +0000] \"-\" 200 10 \"-\" \"-\" 0")
        // Nonsense figures cannot make a line trap or lie.
        let odd = AccessRecord(host: "h", time: .nan, request: nil, bytes: -5, seconds: -.infinity)
        #expect(AccessLog.line(odd).hasSuffix("\"-\" 200 0 \"-\" \"-\" 0"))
        #expect(
            AccessLog.line(AccessRecord(host: "h", time: 0, request: nil, bytes: 0, seconds: 1e300)).hasSuffix(
                " 1000000000000"))
    }

    /// An IPv4 client of a dual-stack socket without its `::ffff:`; an IPv6 address as it is, even one with `ffff`
    /// inside.
    @Test func addressesAreShownAsTheyAre() throws {
        let shown = try ["::ffff:203.0.113.7", "203.0.113.7", "2001:db8::ffff:1", "::1"].map {
            NetworkLoop.accessLogHost(try #require(SocketAddress(host: $0, port: 80)))
        }
        #expect(shown == ["203.0.113.7", "203.0.113.7", "2001:db8::ffff:1", "::1"])
    }

    @Test func aFileGetsALinePerRecordAndIsOpenedAgainAfterRotation() throws {
        let directory = temporaryPath("access")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = AccessLog(capacity: 100)
        defer { log.close() }
        #expect(!log.isOpen)
        log.write(AccessRecord(host: "a", time: 0, request: nil, bytes: 1, seconds: 1))  // off: nothing
        try log.open(path: directory + "/access.log")
        for index in 0..<3 {
            log.write(AccessRecord(host: "h\(index)", time: 0, request: nil, bytes: index, seconds: 1))
        }
        log.flush()
        // logrotate moves the file away, then the service is told to open it again.
        try FileManager.default.moveItem(atPath: directory + "/access.log", toPath: directory + "/access.log.1")
        log.reopen()
        log.write(AccessRecord(host: "after", time: 0, request: nil, bytes: 9, seconds: 2))
        log.flush()
        let rotated = try String(contentsOfFile: directory + "/access.log.1", encoding: .utf8)
        let fresh = try String(contentsOfFile: directory + "/access.log", encoding: .utf8)
        #expect(rotated.split(separator: "\n").map { $0.prefix(2) } == ["h0", "h1", "h2"])
        #expect(fresh == "after - - [01/Jan/1970:00:00:00 +0000] \"-\" 200 9 \"-\" \"-\" 2\n")
        // A file that cannot be opened is an error naming it.
        #expect(throws: SystemError.self) { try AccessLog().open(path: directory + "/missing/dir/access.log") }
    }
}
