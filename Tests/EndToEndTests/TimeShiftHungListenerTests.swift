import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// Time-shifted listeners that hang, on the binary, for the server's whole 30 s: on the Opus mount a client that
/// never reads (a 2 KiB receive buffer), on the MP3 mount a real curl stopped with SIGSTOP. Each is closed as too slow
/// once its socket has taken nothing for 30 s (not before: a listener that is slow for less keeps its place), with
/// the log's reason, while a time-shifted listener that reads beside them gets its audio at real time all along: a
/// hung reader holds its own socket only.
extension DiskTests {
    @Suite(.timeLimit(.minutes(3))) struct TimeShiftHungListenerTests {
        @Test(.enabled(if: tool("curl") != nil, "needs curl"))
        func hungListenersAreClosedAfterThirtySecondsAndHoldNoOne() throws {
            let directory = temporaryPath("shift-hung")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let station = try ServedStation(["--archive", directory, "--archive-span", "10", "--mp3", "yes"])
            defer { station.stop() }
            #expect(station.archiveHolds(8, mp3: true, within: 40), "\(station.server.log)")
            let started = Date()
            let reader = try ListenerClient(port: station.http)
            defer { reader.close() }
            reader.send("GET /test.opus?offset=6 HTTP/1.0\r\n\r\n")
            let hung = try ListenerClient(port: station.http, receiveBuffer: 2048)
            defer { hung.close() }
            hung.send("GET /test.opus?offset=6 HTTP/1.0\r\n\r\n")
            let curl = try SourceClient(
                "curl", ["-s", "-o", "/dev/null", "http://127.0.0.1:\(station.http)/test.mp3?offset=6"])
            defer {
                if curl.process.isRunning { kill(curl.process.processIdentifier, SIGCONT) }
                curl.stop()
            }
            #expect(waitUntil(10) { (try? station.station())?.archive?.timeShifted == 2 }, "the two Opus listeners")
            #expect(waitUntil(10) { (try? station.station())?.archiveMP3?.timeShifted == 1 }, "curl's")
            if curl.process.isRunning { kill(curl.process.processIdentifier, SIGSTOP) }
            // The reader reads all along; the two others hang until the server closes them.
            var heard: [UInt8] = []
            var closed: [String: Double] = [:]
            while Date().timeIntervalSince(started) < 100 && closed.count < 2 {
                heard += reader.read(for: 0.5).bytes
                let now = Date().timeIntervalSince(started)
                guard let figures = try? station.station() else { continue }
                if closed["opus"] == nil, figures.archive?.timeShifted == 1 { closed["opus"] = now }
                if closed["mp3"] == nil, figures.archiveMP3?.timeShifted == 0 { closed["mp3"] = now }
            }
            let elapsed = Date().timeIntervalSince(started)
            heard += reader.read(for: 0.5).bytes
            print(
                "time shift, hung listeners: closed after \(closed) s; the reader got \(heard.count) bytes in \(elapsed) s"
            )
            // Not before 30 s without a byte taken; within the 30 s and the time it took their sockets to fill.
            for mount in ["opus", "mp3"] {
                let after = try #require(closed[mount], "\(mount) not closed: \(station.server.log)")
                #expect(after >= 30 && after < 90, "\(mount) closed after \(after) s")
            }
            #expect(station.server.logged("too slow: no byte taken for 30 s"), "\(station.server.log)")
            #expect(
                station.server.log.components(separatedBy: "too slow: no byte taken for 30 s").count - 1 == 2,
                "\(station.server.log)")
            // The reader: its head, then one Ogg stream at real time (its 2 s burst, then as fast as it plays).
            let blank = Array("\r\n\r\n".utf8)
            let end = try #require(heard.indices.first { heard[$0...].starts(with: blank) })
            let stream = try LiveCapture(Array(heard[(end + blank.count)...]))
            #expect(stream.headerOK && stream.sequenceGaps == 0 && stream.granuleRegressions == 0)
            let audio = Double(stream.lastGranule) / 48_000
            #expect(abs(audio - (elapsed + 2)) < 2, "\(audio) s of audio in \(elapsed) s")
            #expect(try station.station().archive?.timeShifted == 1, "the reader stays")
        }
    }
}
