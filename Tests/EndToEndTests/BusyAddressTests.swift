import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// The binary's HTTP addresses against one busy address and against requests framed to confuse: every client of a
/// status endpoint on 127.0.0.1 has that one address, so a leaky agent's idle connections must never take
/// `/health` (or a stream request) away from it; a request's body is never read as a request of its own.
/// (In the serialized `ServerProcessTests` chain: these block on real time.)
extension ServerProcessTests {
    @Suite(.timeLimit(.minutes(1))) struct BusyAddressTests {
        /// `count` connections from 127.0.0.1 that send nothing.
        static func idle(_ port: UInt16, _ count: Int) throws -> [ListenerClient] {
            try (0..<count).map { _ in try ListenerClient(port: port) }
        }

        /// Sends `request` on a fresh connection; the answer's first line and how long it took to come.
        static func timed(_ port: UInt16, _ request: String) throws -> (line: String, seconds: Double) {
            let client = try ListenerClient(port: port)
            defer { client.close() }
            let start = Date()
            client.send(request)
            var bytes: [UInt8] = []
            while Date().timeIntervalSince(start) < 5 && !bytes.contains(UInt8(ascii: "\n")) {
                let (more, closed) = client.read(for: 0.01, limit: 4096)
                bytes += more
                if closed { break }
            }
            let line = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
            return (line, Date().timeIntervalSince(start))
        }

        @Test func oneThousandIdleConnectionsFromTheAddressOfAHealthCheck() throws {
            let station = try ServedStation()
            defer { station.stop() }
            let held = try Self.idle(station.status, 1_000)
            defer { for client in held { client.close() } }
            usleep(300_000)  // all accepted
            let health = try Self.timed(station.status, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(health.line == "HTTP/1.1 200 OK", "\(health.line)")
            #expect(health.seconds < 1, "\(health.seconds) s")
            let front = try Self.idle(station.http, 1_000)
            defer { for client in front { client.close() } }
            usleep(300_000)
            let stream = try Self.timed(station.http, "GET /test.opus HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(stream.line == "HTTP/1.1 200 OK", "\(stream.line)")
            #expect(stream.seconds < 1, "\(stream.seconds) s")
            print(
                "1000 idle connections from 127.0.0.1 on each port: /health \(health.line) in "
                    + "\(String(format: "%.1f", health.seconds * 1000)) ms, /test.opus \(stream.line) in "
                    + "\(String(format: "%.1f", stream.seconds * 1000)) ms")
            // Each address gave up only its own oldest: the newest idle ones are still open.
            #expect(!held.last!.read(for: 0.05).closed && !front.last!.read(for: 0.05).closed)
            #expect(held.first!.read(for: 0.5).closed && front.first!.read(for: 0.5).closed)
        }

        @Test func framingFollowsRFC9112() throws {
            let station = try ServedStation()
            defer { station.stop() }
            // A body on a GET of the HLS playlist (an answer that keeps its connection), sent after the head as a
            // client or a proxy may send it: the answer closes the connection, so the body (a request of its own)
            // is never answered.
            let playlist = "GET /test/live.m3u8 HTTP/1.1\r\nHost: x\r\n"
            #expect(
                waitUntil(10) { (try? httpFetch(station.http, "GET /test/live.m3u8 HTTP/1.0\r\n\r\n"))?.status == 200 })
            for framing in ["Content-Length: \(playlist.utf8.count + 2)\r\n", "Transfer-Encoding: chunked\r\n"] {
                let client = try ListenerClient(port: station.http)
                defer { client.close() }
                client.send(playlist + framing + "\r\n")
                let first = client.read(for: 0.5)
                client.send((framing.hasPrefix("Transfer") ? "0\r\n\r\n" : "") + playlist + "\r\n")
                let rest = client.read(for: 1)
                let text = String(decoding: first.bytes + rest.bytes, as: UTF8.self)
                #expect(text.hasPrefix("HTTP/1.1 200 OK") && (first.closed || rest.closed), "\(framing)")
                #expect(
                    text.components(separatedBy: "HTTP/1.1 ").count == 2, "a second answer after \(framing): \(text)")
            }
            let lengths = try httpFetch(
                station.http,
                "GET /status-json.xsl HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
            #expect(lengths.status == 400)
            let hosts = try httpFetch(
                station.status, "GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n")
            #expect(hosts.status == 400)
            let absolute = try httpExchange(
                station.http, "GET http://127.0.0.1:\(station.http)/test.opus HTTP/1.1\r\n\r\n", seconds: 1)
            #expect(absolute.head.hasPrefix("HTTP/1.1 200 OK"), "\(absolute.head)")
            #expect(try LiveCapture(absolute.body).headerOK)
            let misdirected = try httpFetch(
                station.status, "GET http://evil.example/status.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(misdirected.status == 421)
        }
    }
}
