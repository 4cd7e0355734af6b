import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// The binary's access log on a FIFO, as a log shipper reads it: a shipper that stalls, one that restarts, and none
/// yet at start-up. Nothing the file does may hold the main thread, a reload or a stop (each within 3 s).
/// (In the serialized `ServerProcessTests` chain: these block on real time.)
extension ServerProcessTests {
    @Suite(.timeLimit(.minutes(1))) struct StuckOutputTests {
        /// A FIFO at a fresh path, removed by `remove()`.
        struct FIFO {
            let path = temporaryPath("access.fifo")
            init() throws { try #require(mkfifo(path, 0o600) == 0) }
            func remove() { unlink(path) }
            /// A reader that never reads (a paused shipper): the writer's open succeeds, the pipe fills.
            func openReader() -> Int32 { Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        }

        /// Bytes waiting in the FIFO's pipe (`FIONREAD` on the reader).
        static func waiting(_ reader: Int32) -> Int {
            var count: Int32 = 0
            return ioctl(reader, UInt(FIONREAD), &count) == 0 ? Int(count) : -1
        }

        /// `count` listeners that connect and leave at once: a line each in the access log.
        static func visits(_ port: UInt16, _ count: Int) throws {
            var index = 0
            while index < count {
                let batch = try (0..<min(100, count - index)).map { _ in try ListenerClient(port: port) }
                usleep(20_000)
                for client in batch { client.close() }
                index += batch.count
            }
        }

        /// Sends SIGTERM; seconds until the process is gone (at most `limit` waited).
        static func stopTime(_ server: ServerProcessTests.ServerProcess, limit: Double = 20) -> Double {
            server.signal(SIGTERM)
            return server.waitForExit(limit: limit)
        }

        @Test func aStalledReaderNeverHoldsTheStop() throws {
            let fifo = try FIFO()
            defer { fifo.remove() }
            let reader = fifo.openReader()
            try #require(reader >= 0)
            defer { Glibc.close(reader) }
            let station = try ServedStation(["--access-log", fifo.path, "--max-per-ip", "0"])
            defer { station.stop() }
            try Self.visits(station.port, 1_500)
            // The pipe is full: the writer waits on it with the rest queued. How many bytes that is depends on how
            // the writes fell: the 16 pages of a pipe hold 64 KiB, but a write that does not fit in the room left in
            // the last page starts a new one, so a batch of lines leaves that room empty (46 284 bytes measured on one
            // machine, over 48 000 on another). Full is when it stops taking bytes; the log line checked after the
            // stop says that lines were left waiting.
            var sample = -1
            #expect(
                waitUntil(15) {
                    let before = sample
                    sample = Self.waiting(reader)
                    if sample == before { return sample > 0 }
                    usleep(500_000)
                    return false
                }, "\(Self.waiting(reader)) bytes in the pipe")
            let took = Self.stopTime(station.server)
            #expect(took <= 3, "exited after \(took) s")
            #expect(station.server.hasExited)
            let log = station.server.log
            print(
                "a stalled access log FIFO (\(Self.waiting(reader)) bytes in its pipe): exited \(took) s after SIGTERM")
            #expect(log.contains("lines not written at the stop"), "\(log)")
            #expect(log.contains("stopped"))
        }

        @Test func aReaderGoneAtAReloadNeverHoldsTheMainThread() throws {
            let fifo = try FIFO()
            defer { fifo.remove() }
            let reader = fifo.openReader()
            try #require(reader >= 0)
            let station = try ServedStation(["--access-log", fifo.path, "--max-per-ip", "0"])
            defer { station.stop() }
            try Self.visits(station.port, 5)
            #expect(waitUntil(5) { Self.waiting(reader) > 0 })
            Glibc.close(reader)  // the shipper exits
            station.server.signal(SIGHUP)
            #expect(
                waitUntil(5) { station.server.log.contains("(a FIFO that no process reads)") }, "\(station.server.log)")
            let health = try httpGet(station.status, "/health")
            #expect(health.status == 200, "\(health.text)")
            station.server.signal(SIGHUP)  // again: answered again
            #expect(try httpGet(station.status, "/health").status == 200)
            let took = Self.stopTime(station.server)
            #expect(took <= 3, "exited after \(took) s")
        }

        /// No reader at start-up: the station serves at once and the log says why the access log is not written; a
        /// reload once a reader is there opens it, and the lines flow.
        @Test func noReaderAtStartUpIsLoggedAndTheStationServes() throws {
            let fifo = try FIFO()
            defer { fifo.remove() }
            let station = try ServedStation(["--access-log", fifo.path, "--max-per-ip", "0"])
            defer { station.stop() }
            let listener = try ListenerClient(port: station.port)
            let (bytes, closed) = listener.read(for: 1)
            listener.close()
            let capture = try LiveCapture(bytes)
            #expect(!closed && capture.headerOK)
            let log = station.server.log
            #expect(log.contains("access log: cannot open \(fifo.path)"), "\(log)")
            #expect(log.contains("(a FIFO that no process reads)"))
            let reader = fifo.openReader()
            try #require(reader >= 0)
            defer { Glibc.close(reader) }
            station.server.signal(SIGHUP)
            #expect(waitUntil(5) { station.server.log.contains("access log: \(fifo.path) (a line per listener") })
            try Self.visits(station.port, 3)
            var received: [UInt8] = []
            #expect(
                waitUntil(5) {
                    var buffer = [UInt8](repeating: 0, count: 65536)
                    let count = Glibc.read(reader, &buffer, buffer.count)
                    if count > 0 { received += buffer[0..<count] }
                    return received.split(separator: UInt8(ascii: "\n")).count >= 3
                })
            let first = String(decoding: received, as: UTF8.self).split(separator: " ")
            #expect(first.count > 3 && first[0] == "127.0.0.1" && first[1].count > 9 && first[2] == "-")
            let took = Self.stopTime(station.server)
            #expect(took <= 3, "exited after \(took) s: \(station.server.log)")
        }
    }
}
