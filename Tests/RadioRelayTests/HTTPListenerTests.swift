import Foundation
import Glibc
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// In the serialized `RealTimeTests` chain: its tests block threads on real time (sockets, players), and too many
/// at once starve the rest of the suite on two cores.
extension RealTimeTests {
    /// HTTP listeners over real sockets: a station relaying the stereo fixture (440 Hz left, 1 kHz right), the public
    /// HTTP front end in front of it, and clients that speak HTTP to it.
    @Suite struct HTTPListenerTests {
        /// A running station and front end, stopped when the test ends.
        final class Rig: @unchecked Sendable {
            let station: Station
            let front: HTTPFront

            init(
                upstream: String = Fixture.path("stereo-44k-128k.mp3"), limits: HTTPFront.Limits = HTTPFront.Limits(),
                budget: ListenerBudget = ListenerBudget(), configure: (inout StationConfiguration) -> Void = { _ in }
            ) throws {
                var configuration = StationConfiguration()
                configuration.name = "test"
                configuration.upstream = upstream
                configuration.broadcaster.bind = "127.0.0.1"
                configuration.broadcaster.port = 0
                configuration.info.displayName = "Test FM"
                configuration.info.genre = "test tones"
                configure(&configuration)
                station = try Station(configuration)
                front = try HTTPFront(
                    address: SocketAddress(host: "127.0.0.1", port: 0)!, stations: [station], limits: limits,
                    budget: budget)
                try station.start()
                do {
                    try front.start()
                } catch {
                    station.stop()
                    throw error
                }
            }

            var port: UInt16 { front.address.port }

            func stop() {
                front.stop(timeout: 5)
                station.stop()
            }
        }

        static func exchange(_ port: UInt16, _ request: String, seconds: Double) throws -> (
            head: String, body: [UInt8], closed: Bool
        ) { try httpExchange(port, request, seconds: seconds) }

        @Test func anHTTPListenerGetsTheHeadThenTheStreamARawListenerGets() throws {
            let rig = try Rig()
            defer { rig.stop() }
            // The 2 s burst is there once the station has made more than 2 s of pages (100 ms each, after 2 header
            // pages); a listener joining sooner gets what there is (a slow start under TSan did: 2.9 s in 3 s).
            #expect(waitUntil(10) { rig.station.broadcaster.counters.snapshot.pagesPublished >= 2 + 23 })
            let (head, body, _) = try Self.exchange(
                rig.port, "GET /test.opus HTTP/1.1\r\nHost: 127.0.0.1\r\nIcy-MetaData: 1\r\nRange: bytes=0-\r\n\r\n",
                seconds: 3)
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(head)")
            for line in ["Content-Type: audio/ogg", "Access-Control-Allow-Origin: *", "icy-name: Test FM"] {
                #expect(head.contains("\r\n\(line)"), "\(line)")
            }
            #expect(!head.lowercased().contains("content-length"))
            let capture = try LiveCapture(body)
            #expect(capture.headerOK)
            #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            // About 3 s read, 2 s of it the burst: at least 3 s of the right audio.
            #expect(capture.left.count > 48_000 * 3)
            #expect(abs(capture.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.05)
            #expect(abs(capture.medianAmplitude(left: false, frequency: 1000) - 0.475) < 0.05)
            #expect(rig.station.broadcaster.counters.snapshot.connections == 1)
        }

        @Test func errorsAreAnsweredOverTheWireAndClosed() throws {
            let rig = try Rig()
            defer { rig.stop() }
            let cases: [(String, String)] = [
                ("GET /nope.opus HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 404 Not Found"),
                ("POST /test.opus HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 405 Method Not Allowed"),
                ("GET /test.opus HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request"),
                ("GET /test.opus HTTP/9\r\n\r\n", "HTTP/1.1 400 Bad Request"),
                ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n", "HTTP/1.1 414 URI Too Long"),
                (
                    "GET / HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 500)
                        + "\r\n",
                    "HTTP/1.1 431 Request Header Fields Too Large"
                ),
                ("OPTIONS /test.opus HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 204 No Content"),
                ("HEAD /test.opus HTTP/1.0\r\n\r\n", "HTTP/1.1 200 OK"),
                ("GET / HTTP/1.0\r\n\r\n", "HTTP/1.1 200 OK"),
            ]
            for (request, status) in cases {
                let (head, body, closed) = try Self.exchange(rig.port, request, seconds: 2)
                #expect(head.hasPrefix(status + "\r\n"), "\(request.prefix(40)): \(head.prefix(80))")
                #expect(closed, "\(request.prefix(40)) left open")
                if request.hasPrefix("HEAD") { #expect(body.isEmpty) }
                if status.contains("405") { #expect(head.contains("\r\nAllow: GET, HEAD, OPTIONS")) }
                if request == "GET / HTTP/1.0\r\n\r\n" {
                    #expect(String(decoding: body, as: UTF8.self).contains("src=\"/test.opus\""))
                }
            }
            // None of these became a listener.
            #expect(rig.station.broadcaster.counters.snapshot.connections == 0)
        }

        /// A client that never finishes its request (slowloris) is closed after the 5 s allowance.
        @Test func anIncompleteRequestIsClosedAfterFiveSeconds() throws {
            let rig = try Rig()
            defer { rig.stop() }
            let client = try ListenerClient(port: rig.port)
            defer { client.close() }
            let started = Date()
            client.send("GET /test.opus HTTP/1.1\r\nHost: x\r\n")
            var closed = false
            var bytes: [UInt8] = []
            while !closed && Date().timeIntervalSince(started) < 9 {
                client.send("X")  // a byte now and then, never the end of the head
                let read = client.read(for: 0.5)
                closed = read.closed
                bytes += read.bytes
            }
            let elapsed = Date().timeIntervalSince(started)
            #expect(closed)
            #expect(bytes.isEmpty)
            #expect(elapsed >= 4.5 && elapsed < 7, "closed after \(elapsed) s")
            #expect(rig.station.broadcaster.counters.snapshot.connections == 0)
        }

        /// One address holding unfinished heads takes at most its pending limit (each new one closes its own
        /// oldest); a listener from another address is served while they sit there, and when every place is taken
        /// the oldest unfinished head gives its place.
        @Test func oneAddressCannotTakeEveryPendingPlace() throws {
            var limits = HTTPFront.Limits()
            limits.maxPendingPerAddress = 4
            limits.maxPending = 8
            let rig = try Rig(limits: limits)
            defer { rig.stop() }
            var flood: [ListenerClient] = []
            defer { for client in flood { client.close() } }
            for _ in 0..<20 {
                let client = try ListenerClient(port: rig.port, source: "127.0.0.2")
                client.send("GET /test.opus HTTP/1.1\r\nX: ")
                flood.append(client)
                usleep(20_000)  // accepted in this order
            }
            let answers = flood.map { $0.read(for: 0.3) }
            let evictedFirst = answers.indices.filter { answers[$0].closed && answers[$0].bytes.isEmpty }
            let held = answers.indices.filter { !answers[$0].closed && answers[$0].bytes.isEmpty }
            #expect(evictedFirst == Array(0..<16) && held == Array(16..<20), "\(evictedFirst) \(held)")
            // Four more addresses fill the other places; the listener from a ninth is served, and the oldest of the
            // 127.0.0.2 heads is closed for it.
            let others = try (3...6).map { try ListenerClient(port: rig.port, source: "127.0.0.\($0)") }
            defer { for client in others { client.close() } }
            for client in others { client.send("GET /test.opus HTTP/1.1\r\nX: ") }
            usleep(100_000)
            let (head, body, _) = try Self.exchange(rig.port, "GET /test.opus HTTP/1.1\r\nHost: x\r\n\r\n", seconds: 1)
            #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
            #expect(try LiveCapture(body).headerOK)
            let evicted = flood.filter { $0.read(for: 0.05).closed }
            #expect(evicted.count == 17)
        }

        /// Idle event subscribers that never read cannot lock listeners out: one address holds at most 64, all of them
        /// together a quarter of the listener places, and a raw and an HTTP listener from another address are served
        /// while they sit there.
        @Test func idleSubscribersCannotTakeTheListenersPlaces() throws {
            let budget = ListenerBudget(limit: 400)
            let rig = try Rig(budget: budget) { $0.broadcaster.maxPerIP = 0 }
            defer { rig.stop() }
            func subscribe(_ source: String) throws -> (ListenerClient, Bool) {
                let client = try ListenerClient(port: rig.port, receiveBuffer: 4096, source: source)
                client.send("GET /test/events HTTP/1.1\r\nHost: x\r\n\r\n")
                // Until its first 12 bytes (a 200 or a refusal), which a loaded machine may take long to send.
                let (bytes, _) = client.read(atLeast: 12, within: 5)
                return (client, String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            }
            var clients: [ListenerClient] = []
            defer { for client in clients { client.close() } }
            var held: [String: Int] = [:]
            for source in ["127.0.0.2", "127.0.0.3"] {
                for _ in 0..<70 {
                    let (client, accepted) = try subscribe(source)
                    clients.append(client)
                    if accepted { held[source, default: 0] += 1 }
                }
            }
            // 64 from the first address; the second reaches the quarter of the 400 places in all.
            #expect(held == ["127.0.0.2": 64, "127.0.0.3": 36], "\(held)")
            #expect(budget.open.load(ordering: .relaxed) == 100)
            let raw = try ListenerClient(port: rig.station.port, source: "127.0.0.4")
            defer { raw.close() }
            #expect(try LiveCapture(raw.read(for: 1).bytes).headerOK)
            let (head, body, _) = try Self.exchange(rig.port, "GET /test.opus HTTP/1.1\r\nHost: x\r\n\r\n", seconds: 1)
            #expect(head.hasPrefix("HTTP/1.1 200 OK"), "\(head)")
            #expect(try LiveCapture(body).headerOK)
        }

        /// `max_per_ip` counts raw and HTTP listeners from one address together.
        @Test func oneCountPerAddressAcrossRawAndHTTP() throws {
            let rig = try Rig { $0.broadcaster.maxPerIP = 1 }
            defer { rig.stop() }
            let raw = try ListenerClient(port: rig.station.port)
            defer { raw.close() }
            #expect(raw.read(for: 0.5).bytes.count > 0)
            let (head, _, closed) = try Self.exchange(rig.port, "GET /test.opus HTTP/1.0\r\n\r\n", seconds: 1)
            #expect(head.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"), "\(head)")
            #expect(closed)
            #expect(rig.station.broadcaster.counters.snapshot.rejected == 1)
        }

        /// The title of an ICY metadata block reaches an event subscriber within a second of the upstream sending it.
        @Test func aTitleChangeReachesEventSubscribersWithinASecond() throws {
            let audio = try Fixture.bytes("stereo-44k-128k.mp3")
            let interval = 16_000
            let pace = 16_400
            let titles = [0: "First Song", 5: "Second <Song> & more"]
            var body: [UInt8] = []
            var offsets: [String: Int] = [:]
            var offset = 0
            var block = 0
            let source = audio + audio + audio + audio
            while offset + interval <= source.count {
                body += source[offset..<offset + interval]
                offset += interval
                if let title = titles[block] {
                    offsets[title] = body.count
                    var text = Array("StreamTitle='\(title)';".utf8)
                    text += Array(repeating: 0, count: (text.count + 15) / 16 * 16 - text.count)
                    body.append(UInt8(text.count / 16))
                    body += text
                } else {
                    body.append(0)
                }
                block += 1
            }
            final class Clock: @unchecked Sendable {
                let lock = NSLock()
                var requestedAt: Date?
            }
            let clock = Clock()
            let stream = body
            let upstream = try HTTPTestServer { _ in
                clock.lock.lock()
                clock.requestedAt = clock.requestedAt ?? Date()
                clock.lock.unlock()
                return .init(
                    headers: ["Content-Type": "audio/mpeg", "icy-metaint": "\(interval)"], body: stream, pace: pace,
                    holdOpen: 5)
            }
            defer { upstream.stop() }
            let rig = try Rig(upstream: upstream.baseURL + "/live.mp3")
            defer { rig.stop() }
            let client = try ListenerClient(port: rig.port)
            defer { client.close() }
            client.send("GET /test/events HTTP/1.1\r\nHost: x\r\n\r\n")
            var text = ""
            var arrivals: [String: Date] = [:]
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && arrivals["Second <Song> & more"] == nil {
                let (bytes, closed) = client.read(for: 0.05)
                text += String(decoding: bytes, as: UTF8.self)
                for title in titles.values where arrivals[title] == nil && text.contains("data: \(title)\n") {
                    arrivals[title] = Date()
                }
                if closed { break }
            }
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(text.contains("Content-Type: text/event-stream"))
            #expect(text.contains("event: title\ndata: Second <Song> & more\n\n"))
            clock.lock.lock()
            let requestedAt = try #require(clock.requestedAt)
            clock.lock.unlock()
            let second = try #require(arrivals["Second <Song> & more"])
            let blockOffset = try #require(offsets["Second <Song> & more"])
            // The test server sends in pieces of pace/50 bytes at the pace: the block left no earlier than this.
            let sentAt = requestedAt.addingTimeInterval(Double(blockOffset - pace / 50) / Double(pace))
            let latency = second.timeIntervalSince(sentAt)
            print("title latency: \(String(format: "%.3f", latency)) s after the upstream sent its metadata block")
            #expect(latency < 1.0)
            #expect(rig.station.state.title == "Second <Song> & more")
        }
    }
}
