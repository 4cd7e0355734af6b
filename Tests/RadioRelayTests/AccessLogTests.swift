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
            host: "203.0.113.7", time: 1_796_227_388.75, id: ListenerID(42), mount: "/jazz.mp3", request: request,
            bytes: 482_133, seconds: 30.9)
        #expect(
            AccessLog.line(http)
                == "203.0.113.7 \(ListenerID.run)-42 - [02/Dec/2026:16:03:08 +0000] \"GET /jazz.mp3 HTTP/1.1\" 200 "
                + "482133 \"https://***@radio.example/play?key=***\" \"VLC/3.0.18 \\\"quoted\\\" \\\\ back\" 30")
        #expect(ListenerID.run.utf8.count == 8 && ListenerID.run.utf8.allSatisfy { Character(.init($0)).isHexDigit })
        // A raw TCP listener sent no request: its mount where the request would be, "-" for referrer and agent.
        let raw = AccessRecord(
            host: "::1", time: 0, id: ListenerID(7), mount: "/jazz.opus", request: nil, bytes: 10, seconds: 0.2)
        #expect(
            AccessLog.line(raw)
                == "::1 \(ListenerID.run)-7 - [01/Jan/1970:00:00:00 +0000] \"TCP /jazz.opus\" 200 10 \"-\" \"-\" 0")
        // Nonsense figures cannot make a line trap or lie; a hostile mount is one line of printable text.
        let odd = AccessRecord(host: "h", time: .nan, mount: "/x\r\n\"y", request: nil, bytes: -5, seconds: -.infinity)
        #expect(AccessLog.line(odd).hasSuffix(" 200 0 \"-\" \"-\" 0"))
        #expect(!AccessLog.line(odd).contains("\n") && AccessLog.line(odd).contains("\"TCP /x\\\"y\""))
        #expect(
            AccessLog.line(AccessRecord(host: "h", time: 0, request: nil, bytes: 0, seconds: 1e300)).hasSuffix(
                " 1000000000000"))
    }

    /// An IPv4 client of a dual-stack socket without its `::ffff:`; an IPv6 address as it is, even one with `ffff`
    /// inside.
    @Test func addressesAreShownAsTheyAre() throws {
        let shown = try ["::ffff:203.0.113.7", "203.0.113.7", "2001:db8::ffff:1", "::1"].map {
            ListenerAdmission.shownAddress(try #require(SocketAddress(host: $0, port: 80)))
        }
        #expect(shown == ["203.0.113.7", "203.0.113.7", "2001:db8::ffff:1", "::1"])
    }

    @Test func aFileGetsALinePerRecordAndIsOpenedAgainAfterRotation() throws {
        let directory = temporaryPath("access")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = AccessLog(capacity: 100)
        defer { log.stop() }
        #expect(!log.isOpen)
        log.write(AccessRecord(host: "a", time: 0, request: nil, bytes: 1, seconds: 1))  // off: nothing
        log.open(path: directory + "/access.log")
        #expect(log.flush(timeout: 10) == 0)
        #expect(log.isWritable)
        for index in 0..<3 {
            log.write(AccessRecord(host: "h\(index)", time: 0, request: nil, bytes: index, seconds: 1))
        }
        #expect(log.flush(timeout: 10) == 0)
        // logrotate moves the file away, then the service is told to open it again.
        try FileManager.default.moveItem(atPath: directory + "/access.log", toPath: directory + "/access.log.1")
        log.reopen()
        log.write(AccessRecord(host: "after", time: 0, request: nil, bytes: 9, seconds: 2))
        #expect(log.flush(timeout: 10) == 0)
        let rotated = try String(contentsOfFile: directory + "/access.log.1", encoding: .utf8)
        let fresh = try String(contentsOfFile: directory + "/access.log", encoding: .utf8)
        #expect(rotated.split(separator: "\n").map { $0.prefix(2) } == ["h0", "h1", "h2"])
        #expect(fresh == "after - - [01/Jan/1970:00:00:00 +0000] \"TCP -\" 200 9 \"-\" \"-\" 2\n")
        // A file that cannot be opened is logged (by the writer) and leaves the log without a file: lines are
        // counted, not queued, and nothing is created.
        let missing = AccessLog(capacity: 10)
        defer { missing.stop() }
        missing.open(path: directory + "/missing/dir/access.log")
        #expect(missing.flush(timeout: 10) == 0)
        #expect(missing.isOpen && !missing.isWritable)
        missing.write(AccessRecord(host: "x", time: 0, request: nil, bytes: 1, seconds: 1))
        #expect(!FileManager.default.fileExists(atPath: directory + "/missing"))
    }

    /// A FIFO as the access log (a log shipper): without a reader it cannot be opened, and that returns at once
    /// (never waiting for a reader); with a reader that stops reading, lines pile up in the queue, and a stop ends
    /// within its timeout, counting what it could not write; with the reader gone, a reopen neither waits nor loses
    /// the descriptor it had.
    @Test func aFIFOWithoutAReaderOrWithAStalledOneNeverHoldsTheCaller() throws {
        let fifo = temporaryPath("access.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let unread = AccessLog(capacity: 100)
        let start = monotonicNow()
        unread.open(path: fifo)
        #expect(unread.flush(timeout: 10) == 0)
        #expect(!unread.isWritable)
        #expect(unread.stop(timeout: 1) == 0)
        #expect(monotonicNow() - start < 5)

        // A reader that never reads: the pipe fills (64 KiB), then lines wait in the queue.
        let reader = Glibc.open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(reader >= 0)
        let log = AccessLog(capacity: 10_000)
        log.open(path: fifo)
        #expect(log.flush(timeout: 10) == 0)
        #expect(log.isWritable)
        let request = ListenerRequest(
            line: "GET /main.opus HTTP/1.1", referrer: nil, userAgent: String(repeating: "agent ", count: 20),
            metaInterval: 0)
        for index in 0..<1_500 {
            log.write(AccessRecord(host: "10.0.0.\(index % 250)", time: 0, request: request, bytes: index, seconds: 1))
        }
        let flushStart = monotonicNow()
        let unflushed = log.flush(timeout: 0.5)
        #expect(unflushed > 0, "the pipe took every line: \(unflushed)")
        #expect(monotonicNow() - flushStart < 2)
        // The reader goes away (a shipper restarting): a reopen cannot open the FIFO and keeps what it had.
        _ = Glibc.close(reader)
        let reopenStart = monotonicNow()
        log.reopen()
        #expect(monotonicNow() - reopenStart < 0.5)
        let stopStart = monotonicNow()
        let unwritten = log.stop(timeout: 1)
        let took = monotonicNow() - stopStart
        #expect(took < 2.5, "\(took) s")
        #expect(unwritten >= 0 && unwritten <= 1_500)
    }

    /// Lines the queue drops leave a marker line where they would have been (`AccessLog.droppedMarker`): the lines
    /// in the file and the markers' counts add up to every listener that left, as a report reads them. A FIFO that
    /// is not read for a while makes the drops certain.
    @Test func droppedLinesLeaveAMarkerThatCountsThem() throws {
        let fifo = temporaryPath("access-marker.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let reader = Glibc.open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(reader >= 0)
        defer { _ = Glibc.close(reader) }
        let log = AccessLog(capacity: 4)
        defer { log.stop() }
        log.open(path: fifo)
        #expect(log.flush(timeout: 10) == 0 && log.isWritable)
        func record(_ id: Int) -> AccessRecord {
            AccessRecord(
                host: "10.0.\(id / 250).\(id % 250)", time: 1_796_227_388, id: ListenerID(UInt64(id)), mount: "/m.opus",
                request: nil, bytes: 1_000, seconds: 30)
        }
        // Some 270 KB of lines while nothing reads: the pipe takes 64 KiB, the queue 4 lines, the rest is dropped.
        for id in 1...3_000 { log.write(record(id)) }
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        func drain() {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, $0.count) }
            if count > 0 { text += chunk[0..<count] }
        }
        // Read until every line queued is written, then one more listener leaves: its batch carries the last marker.
        #expect(
            waitUntil(10) {
                drain()
                return log.flush(timeout: 0.05) == 0
            })
        log.write(record(3_001))
        let last = Array(" \(ListenerID.run)-3001 ".utf8)
        #expect(
            waitUntil(10) {
                drain()
                return text.firstRange(of: last) != nil
            })
        // Every line is a listener's or a marker, and they add up.
        var listeners = 0
        var dropped = 0
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            guard line.hasPrefix(AccessLog.markerPrefix) else {
                #expect(line.hasPrefix("10.0.") && line.hasSuffix(" 200 1000 \"-\" \"-\" 30"))
                listeners += 1
                continue
            }
            let count = line.dropFirst(AccessLog.markerPrefix.count).prefix { $0.isNumber }
            #expect(line.dropFirst(AccessLog.markerPrefix.count + count.count).hasPrefix(" access log line"))
            dropped += Int(count) ?? 0
        }
        #expect(dropped > 1_000 && listeners + dropped == 3_001, "\(listeners) lines, \(dropped) dropped")
    }
}
