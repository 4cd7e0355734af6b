import Foundation
import Glibc
import RadioRelay
import RadioRelayNet
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: one real peer at a time.
extension PeerTests {
    /// Access lists (`deny` with IPv4 and IPv6 networks, `deny_agents`, `deny_countries` from a MaxMind-format
    /// database written by MaxMind's writer) decided on the listener's own address behind a real HAProxy:
    /// in HTTP mode with `option forwardfor` (the HTTP address believes `X-Forwarded-For` from `forwarded_from`
    /// only) and in TCP mode with a PROXY header (the raw port). Listeners connect from distinct loopback addresses.
    @Suite(.timeLimit(.minutes(1))) struct AccessThroughProxyTests {
        /// The status line of what the server answers `request` sent from `source` to `port`, and the bytes after
        /// the head read within `seconds`.
        static func ask(_ port: UInt16, from source: String, _ request: String, seconds: Double = 1.0) throws -> (
            status: String, code: Int, body: Int
        ) {
            let client = try ListenerClient(port: port, source: source)
            defer { client.close() }
            client.send(request)
            let (bytes, _) = client.read(for: seconds)
            let text = String(decoding: bytes.prefix(512), as: UTF8.self)
            let status = text.split(separator: "\r\n").first.map(String.init) ?? ""
            let head = bytes.indices.first { bytes[$0...].starts(with: Array("\r\n\r\n".utf8)) }
            let code = status.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return (status, code, head.map { bytes.count - $0 - 4 } ?? 0)
        }

        static func get(_ agent: String = "mpv 0.35.1", forwardedFor: String? = nil) -> String {
            "GET /test.opus HTTP/1.1\r\nHost: radio.example\r\nUser-Agent: \(agent)\r\n"
                + (forwardedFor.map { "X-Forwarded-For: \($0)\r\n" } ?? "") + "\r\n"
        }

        @Test(.enabled(if: tool("haproxy") != nil && tool("curl") != nil))
        func theListenersOwnAddressDecidesThroughHAProxyInHTTPAndTCPMode() throws {
            let directory = temporaryPath("access")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let agents = directory + "/agents.txt"
            try "# stream rippers\n*ripper*\n".write(toFile: agents, atomically: true, encoding: .utf8)
            // A country database of our own: 127.0.0.64/28 is in France.
            let countries = directory + "/countries.mmdb"
            try writeCountryDatabase(countries, [("127.0.0.64/28", "FR"), ("127.0.0.80/28", "DE")])
            let (raw, http, status, httpFront, tcpFront, v6Front) = (
                try freePort(), try freePort(), try freePort(), try freePort(), try freePort(), try freePort()
            )
            let config = directory + "/radio-relay.conf"
            try """
            [server]
            http = 127.0.0.1:\(http)
            status = 127.0.0.1:\(status)
            forwarded_from = 127.0.0.1
            [station test]
            upstream = \(Fixture.path("stereo-44k-128k.mp3"))
            bind = 127.0.0.1
            port = \(raw)
            proxy_protocol = yes
            deny = 127.0.0.66, 127.0.1.0/24, ::/127
            deny_agents = @\(agents)
            geoip = \(countries)
            deny_countries = FR

            """.write(toFile: config, atomically: true, encoding: .utf8)
            let server = try ServerProcessTests.ServerProcess(arguments: ["--config", config])
            defer { server.stop() }
            let haproxy = try HAProxyTests.HAProxy(
                config: """
                    global
                        stats socket STATS mode 600 level admin
                    defaults
                        timeout connect 1s
                        timeout client 1m
                        timeout server 1m
                    frontend web
                        mode http
                        bind 127.0.0.1:\(httpFront)
                        bind [::1]:\(v6Front)
                        option forwardfor
                        default_backend relay-http
                    backend relay-http
                        mode http
                        server relay 127.0.0.1:\(http)
                    frontend raw
                        mode tcp
                        bind 127.0.0.1:\(tcpFront)
                        default_backend relay-raw
                    backend relay-raw
                        mode tcp
                        server relay 127.0.0.1:\(raw) send-proxy-v2

                    """)
            defer { haproxy.stop() }
            // HAProxy is up once its HTTP front answers.
            let deadline = Date().addingTimeInterval(8)
            while Date() < deadline,
                (try? Self.ask(httpFront, from: "127.0.0.20", Self.get(), seconds: 0.3))?.code != 200
            {
                usleep(100_000)
            }

            // HTTP mode: the address HAProxy appends decides, whatever the listener wrote itself.
            let served = try Self.ask(httpFront, from: "127.0.0.20", Self.get(forwardedFor: "127.0.0.66"))
            #expect(served.code == 200 && served.body > 8_000, "\(served)")
            let denied = try Self.ask(httpFront, from: "127.0.0.66", Self.get(forwardedFor: "127.0.0.20"))
            #expect(denied.code == 403, "\(denied)")
            let inRange = try Self.ask(httpFront, from: "127.0.1.9", Self.get())
            #expect(inRange.code == 403, "a /24 of IPv4: \(inRange)")
            let ripper = try Self.ask(httpFront, from: "127.0.0.21", Self.get("StreamRipper/1.64.6"))
            #expect(ripper.code == 403, "\(ripper)")
            let french = try Self.ask(httpFront, from: "127.0.0.72", Self.get())
            #expect(french.code == 403, "a country denied: \(french)")
            let german = try Self.ask(httpFront, from: "127.0.0.85", Self.get())
            #expect(german.code == 200, "\(german)")
            // IPv6: a listener on ::1 through HAProxy's IPv6 front, within ::/127.
            let curl = try run(
                try #require(tool("curl")),
                ["-g", "-s", "-o", "/dev/null", "-m", "2", "-w", "%{http_code}", "http://[::1]:\(v6Front)/test.opus"])
            #expect(curl.stdout == "403", "\(curl)")
            // Straight to the HTTP address from a peer not in forwarded_from: its header is not believed.
            let forged = try Self.ask(http, from: "127.0.0.66", Self.get(forwardedFor: "127.0.0.20"))
            #expect(forged.code == 403, "\(forged)")
            let plain = try Self.ask(http, from: "127.0.0.22", Self.get(forwardedFor: "127.0.0.66"))
            #expect(plain.code == 200, "\(plain)")

            // TCP mode with PROXY: the raw port, by the header's source (no request, so no agent).
            let rawServed = try ListenerClient(port: tcpFront, source: "127.0.0.23")
            defer { rawServed.close() }
            let rawBytes = rawServed.read(for: 1.0)
            #expect(!rawBytes.closed && rawBytes.bytes.count > 8_000)
            let rawDenied = try ListenerClient(port: tcpFront, source: "127.0.0.66")
            defer { rawDenied.close() }
            let refused = rawDenied.read(for: 1.5)
            #expect(refused.closed && refused.bytes.isEmpty)

            // Counted by reason; the status list shows the listener's own address.
            let snapshot = try statusSnapshot(status)
            let counts = Dictionary(uniqueKeysWithValues: snapshot.refusals.map { ($0.reason, $0.count) })
            #expect(
                counts[.addressDenied] == 5 && counts[.agentDenied] == 1 && counts[.countryDenied] == 1,
                "\(snapshot.refusals)")
            #expect(snapshot.listeners.contains { $0.address == "127.0.0.23" && $0.kind == .tcp })
            let metrics = try httpGet(status, "/metrics").text
            #expect(metrics.contains("radio_relay_listeners_refused_total{reason=\"address_denied\"} 5"))
            #expect(server.logged("address denied (deny)"))
        }
    }
}
