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
    /// The PROXY protocol over real sockets on 127.0.0.1: a station's raw port and the public HTTP address with it on,
    /// and clients that send the header a load balancer would. Every client really comes from 127.0.0.1, so a per-address
    /// limit that tells them apart proves the header's source is what counts.
    @Suite(.timeLimit(.minutes(1))) struct ProxyListenerTests {
        static func endpoint(_ host: String, _ port: UInt16 = 40_000) -> ProxyHeader.Endpoint {
            ProxyHeaderBytes.endpoint(host, port)
        }

        static func header(from host: String, port: UInt16 = 40_000) -> [UInt8] {
            ProxyHeaderBytes.v2(source: endpoint(host, port), destination: endpoint("10.0.0.2", 8000))
        }

        /// A started station relaying the stereo fixture, its raw port behind a balancer.
        static func station(configure: (inout StationConfiguration) -> Void = { _ in }) throws -> Station {
            let station = try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3")) {
                $0.broadcaster.proxyProtocol = true
                configure(&$0)
            }
            try station.start()
            return station
        }

        /// Waits (up to 5 s) until `condition` holds.
        static func eventually(_ condition: () -> Bool) -> Bool {
            let deadline = monotonicNow() + 5
            while !condition() && monotonicNow() < deadline { usleep(10_000) }
            return condition()
        }

        @Test func aRawListenerCountsAsTheClientItsHeaderNames() throws {
            let station = try Self.station { $0.broadcaster.maxPerIP = 1 }
            defer { station.stop() }
            let first = try ListenerClient(port: station.port)
            defer { first.close() }
            first.send(Self.header(from: "203.0.113.7"))
            let (bytes, closed) = first.read(for: 1)
            #expect(!closed)
            let capture = try LiveCapture(bytes)
            #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.left.count > 48_000)
            #expect(abs(capture.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.05)

            // Another connection of the same client (another port) is over its limit of 1; another client is not.
            let again = try ListenerClient(port: station.port)
            defer { again.close() }
            again.send(Self.header(from: "203.0.113.7", port: 40_001))
            let refused = again.read(for: 2)
            #expect(refused.closed && refused.bytes.isEmpty)
            let other = try ListenerClient(port: station.port)
            defer { other.close() }
            other.send(
                ProxyHeaderBytes.v1(source: Self.endpoint("2001:db8::9"), destination: Self.endpoint("::1", 8000)))
            let served = other.read(for: 0.5)
            let servedCapture = try LiveCapture(served.bytes)
            #expect(!served.closed && servedCapture.headerOK)
            let counters = station.broadcaster.counters.snapshot
            #expect(counters.connections == 3 && counters.rejected == 1 && counters.listeners == 2)
            #expect(counters.proxyRejected == 0)
        }

        /// A header that arrives in pieces (a balancer's first segment cut short) is waited for; what the client sends
        /// after it is read and dropped like any listener's.
        @Test func aHeaderInPiecesIsWaitedFor() throws {
            let station = try Self.station()
            defer { station.stop() }
            let client = try ListenerClient(port: station.port)
            defer { client.close() }
            let header = ProxyHeaderBytes.v1(
                source: Self.endpoint("198.51.100.1"), destination: Self.endpoint("10.0.0.2"))
            client.send(Array(header[..<10]))
            let early = client.read(for: 0.3)
            #expect(early.bytes.isEmpty && !early.closed)
            client.send(Array(header[10...]) + Array("hello".utf8))
            let (bytes, closed) = client.read(for: 0.5)
            let capture = try LiveCapture(bytes)
            #expect(!closed && capture.headerOK)
            #expect(station.broadcaster.counters.snapshot.listeners == 1)
        }

        /// No header, a wrong one, or the balancer's own LOCAL connection: closed, no listener; only the failures count.
        @Test func whatIsNoListenerIsClosed() throws {
            let station = try Self.station()
            defer { station.stop() }
            let counters = station.broadcaster.counters
            // LOCAL (HAProxy's health check of this port): read, then closed, not a failure.
            let local = try ListenerClient(port: station.port)
            defer { local.close() }
            local.send(ProxyHeaderBytes.v2Local)
            let checked = local.read(for: 2)
            #expect(checked.closed && checked.bytes.isEmpty)
            // A plain request where the header should be: closed at once.
            let plain = try ListenerClient(port: station.port)
            defer { plain.close() }
            plain.send("GET / HTTP/1.0\r\n\r\n")
            let started = monotonicNow()
            let refused = plain.read(for: 2)
            #expect(refused.closed && refused.bytes.isEmpty && monotonicNow() - started < 1)
            // Nothing at all: closed after the 3 s allowance.
            let silent = try ListenerClient(port: station.port)
            defer { silent.close() }
            let waited = silent.read(for: 5)
            let elapsed = monotonicNow() - started
            #expect(waited.closed && waited.bytes.isEmpty)
            #expect(elapsed > 2.5 && elapsed < 4.5, "closed after \(elapsed) s")
            #expect(Self.eventually { counters.snapshot.proxyRejected == 2 })
            #expect(counters.snapshot.connections == 0 && counters.snapshot.listeners == 0)
            // Status and metrics show the failures.
            let snapshot = StatusSnapshot(stations: [station], uptime: 1, alive: [true])
            #expect(StatusReport.json(snapshot).contains("\"proxy_header_failures\":2"))
            #expect(
                MetricsReport.text(snapshot).contains(
                    "radio_relay_proxy_header_failures_total{station=\"test\",rendition=\"main\"} 2\n"))
        }

        // MARK: The public HTTP address

        @Test func anHTTPListenerBehindABalancerCountsAsItsClient() throws {
            let station = try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3")) {
                $0.broadcaster.maxPerIP = 1
            }
            try station.start()
            defer { station.stop() }
            let front = try HTTPFront(
                address: SocketAddress(host: "127.0.0.1", port: 0)!, stations: [station], proxyProtocol: true)
            try front.start()
            defer { front.stop(timeout: 5) }
            let port = front.address.port
            let request = Array("GET /test.opus HTTP/1.1\r\nHost: radio\r\n\r\n".utf8)

            // Header and request in one segment, as HAProxy sends them: the request is still read whole.
            let first = try ListenerClient(port: port)
            defer { first.close() }
            first.send(Self.header(from: "203.0.113.7") + request)
            let (bytes, closed) = first.read(for: 1)
            #expect(!closed)
            let text = String(decoding: bytes.prefix(12), as: UTF8.self)
            #expect(text == "HTTP/1.1 200")
            // The same client again: the station's limit of 1 per address answers 503.
            let again = try ListenerClient(port: port)
            defer { again.close() }
            again.send(Self.header(from: "203.0.113.7", port: 40_001) + request)
            let refused = String(decoding: again.read(for: 2).bytes, as: UTF8.self)
            #expect(refused.hasPrefix("HTTP/1.1 503"), "\(refused.prefix(80))")
            // The balancer's own connection (LOCAL) is answered as coming from the balancer.
            let local = try ListenerClient(port: port)
            defer { local.close() }
            local.send(ProxyHeaderBytes.v2Local + Array("GET / HTTP/1.0\r\n\r\n".utf8))
            let page = String(decoding: local.read(for: 2).bytes, as: UTF8.self)
            #expect(page.hasPrefix("HTTP/1.1 200") && page.contains("/test.opus"))
            // A request without its header is closed unanswered.
            let plain = try ListenerClient(port: port)
            defer { plain.close() }
            plain.send("GET / HTTP/1.0\r\n\r\n")
            let unanswered = plain.read(for: 2)
            #expect(unanswered.closed && unanswered.bytes.isEmpty)
            #expect(front.proxyRejected.load(ordering: .relaxed) == 1)
            let counters = station.broadcaster.counters.snapshot
            #expect(counters.connections == 2 && counters.rejected == 1 && counters.httpListeners == 1)
        }
        // MARK: Trusted proxies

        /// Only the balancers' addresses are believed: with `proxy_from = 127.0.0.1`, twenty connections from 127.0.0.2
        /// claiming twenty addresses are all closed (none admitted past `max_per_ip = 1`), and counted; the same
        /// header from 127.0.0.1 is used.
        @Test func aHeaderFromAnUntrustedPeerIsNotBelieved() throws {
            let station = try Self.station {
                $0.broadcaster.maxPerIP = 1
                $0.broadcaster.proxyFrom = TrustedProxies(parsing: "127.0.0.1")
            }
            defer { station.stop() }
            let counters = station.broadcaster.counters
            var forged: [ListenerClient] = []
            defer { for client in forged { client.close() } }
            for index in 1...20 {
                let client = try ListenerClient(port: station.port, source: "127.0.0.2")
                client.send(Self.header(from: "198.51.100.\(index)"))
                forged.append(client)
            }
            for client in forged {
                let (bytes, closed) = client.read(for: 1)
                #expect(closed && bytes.isEmpty)
            }
            #expect(Self.eventually { counters.snapshot.proxyRejected == 20 })
            #expect(counters.snapshot.listeners == 0)
            let trusted = try ListenerClient(port: station.port)
            defer { trusted.close() }
            trusted.send(Self.header(from: "198.51.100.1"))
            let (bytes, closed) = trusted.read(for: 1)
            #expect(try !closed && LiveCapture(bytes).headerOK)
            #expect(counters.snapshot.listeners == 1 && counters.snapshot.proxyRejected == 20)
        }

        /// Without `proxy_from`, loopback is trusted (a balancer on the same machine keeps working) and nothing else.
        @Test func withoutTheSettingLoopbackIsTrusted() throws {
            let station = try Self.station()
            defer { station.stop() }
            let local = try ListenerClient(port: station.port, source: "127.0.0.2")
            defer { local.close() }
            local.send(Self.header(from: "203.0.113.9"))
            let (bytes, closed) = local.read(for: 1)
            #expect(try !closed && LiveCapture(bytes).headerOK)
            #expect(station.broadcaster.counters.snapshot.listeners == 1)
            #expect(TrustedProxies.loopback.description == "127.0.0.0/8, ::1")
        }

        @Test func theHTTPAddressBelievesOnlyItsBalancers() throws {
            let station = try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3"))
            try station.start()
            defer { station.stop() }
            let front = try HTTPFront(
                address: SocketAddress(host: "127.0.0.1", port: 0)!, stations: [station], proxyProtocol: true,
                trustedProxies: TrustedProxies(parsing: "10.0.0.0/8, ::1")!)
            try front.start()
            defer { front.stop(timeout: 5) }
            let request = Array("GET /test.opus HTTP/1.1\r\nHost: radio\r\n\r\n".utf8)
            let forged = try ListenerClient(port: front.address.port)
            defer { forged.close() }
            forged.send(Self.header(from: "203.0.113.7") + request)
            let refused = forged.read(for: 2)
            #expect(refused.closed && refused.bytes.isEmpty)
            #expect(front.proxyRejected.load(ordering: .relaxed) == 1)
            // A reload that trusts 127.0.0.0/8: the same client is served.
            front.setTrustedProxies(TrustedProxies(parsing: "127.0.0.0/8")!)
            let trusted = try ListenerClient(port: front.address.port)
            defer { trusted.close() }
            trusted.send(Self.header(from: "203.0.113.7") + request)
            let served = String(decoding: trusted.read(for: 1).bytes.prefix(12), as: UTF8.self)
            #expect(served == "HTTP/1.1 200")
        }
    }
}
