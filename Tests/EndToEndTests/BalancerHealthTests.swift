import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// In the serialized `ServerProcessTests` chain: its tests block threads on real time (sockets, players), and too many
/// at once starve the rest of the suite on two cores.
extension ServerProcessTests {
    /// `/health` as a load balancer reads it (`deploy/haproxy.cfg`: `option httpchk GET /health`, expect 200): it says
    /// whether this process can serve, not whether its upstream is up. An edge whose root is down serves silence and
    /// must stay in the pool, or every edge would leave it at once; an edge with a hung thread must leave it.
    @Suite(.timeLimit(.minutes(1))) struct BalancerHealthTests {
        @Test func healthIs200WhileTheUpstreamIsDown() throws {
            let dead = try freePort()
            let station = try ServedStation(upstream: "http://127.0.0.1:\(dead)/stream.mp3")
            defer { station.stop() }
            // Past the 3 s allowance, with the upstream refused all along: still 200, and the listener gets silence.
            let listener = try ListenerClient(port: station.port)
            defer { listener.close() }
            let (bytes, closed) = listener.read(for: 3.5)
            let health = try httpGet(station.status, "/health")
            #expect(health.status == 200, "\(health.text)")
            #expect(health.text.hasPrefix("ok\ntest: alive (upstream "), "\(health.text)")
            #expect(!health.text.contains("upstream connected"))
            let capture = try LiveCapture(bytes)
            #expect(!closed && capture.headerOK && capture.left.count > 48_000 * 2)
            #expect(capture.left.allSatisfy { abs($0) < 0.001 }, "silence while the upstream is down")
        }
    }
}

extension ServerProcessTests {
    /// The real binary with its upstream down and a pipeline hung by the test hook after 1 s: `/health` answers
    /// 200 until the hang outlasts the allowance (3 s), then 503, so the balancer takes the edge out.
    @Test func healthIs503OnceAPipelineHangsAnd200BeforeWithTheUpstreamDown() throws {
        let status = try freePort()
        let server = try ServerProcess(
            arguments: [
                "serve", "--bind", "127.0.0.1", "--port", "\(try freePort())",
                "--upstream", "http://127.0.0.1:\(try freePort())/stream.mp3", "--status", "127.0.0.1:\(status)",
            ], environment: ["RADIO_RELAY_TEST_HANG_PIPELINE": "main:1"])
        defer { server.stop() }
        let first = try httpGet(status, "/health")
        #expect(first.status == 200 && first.text.hasPrefix("ok\nmain: alive (upstream "), "\(first.text)")
        let deadline = Date().addingTimeInterval(10)
        var answer = first
        while answer.status != 503 && Date() < deadline {
            usleep(200_000)
            answer = try httpGet(status, "/health")
        }
        #expect(answer.status == 503 && answer.text.hasPrefix("unhealthy\nmain: stalled"), "\(answer.text)")
        #expect(server.logged("RADIO_RELAY_TEST_HANG_PIPELINE"), "\(server.log)")
    }

    /// `serve --proxy-protocol yes` puts both the station's port and `--http` behind the balancer.
    @Test func serveWithTheProxyProtocolExpectsTheHeaderOnBothAddresses() throws {
        let http = try freePort()
        let server = try ServerProcess(arguments: [
            "serve", "--bind", "127.0.0.1", "--port", "\(try freePort())", "--http", "127.0.0.1:\(http)",
            "--proxy-protocol", "yes",
        ])
        defer { server.stop() }
        let header = ProxyHeaderBytes.v2(
            source: ProxyHeaderBytes.endpoint("203.0.113.7", 40_000),
            destination: ProxyHeaderBytes.endpoint("10.0.0.2", 8000))
        let raw = try ListenerClient(port: server.port)
        defer { raw.close() }
        raw.send(header)
        let stream = try LiveCapture(raw.read(for: 1).bytes)
        #expect(stream.headerOK)
        let listener = try ListenerClient(port: http)
        defer { listener.close() }
        listener.send(header + Array("GET /main.opus HTTP/1.0\r\n\r\n".utf8))
        let answer = String(decoding: listener.read(for: 1).bytes.prefix(15), as: UTF8.self)
        #expect(answer == "HTTP/1.1 200 OK")
        // Without the header, neither answers.
        let plain = try ListenerClient(port: http)
        defer { plain.close() }
        plain.send("GET /main.opus HTTP/1.0\r\n\r\n")
        let refused = plain.read(for: 2)
        #expect(refused.closed && refused.bytes.isEmpty)
        #expect(
            server.log.split(separator: "\n").contains {
                $0.contains("tcp listener #") && $0.contains(" 203.0.113.7:40000 connected")
            },
            "\(server.log)")
    }
}
