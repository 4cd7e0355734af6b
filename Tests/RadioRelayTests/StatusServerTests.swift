import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The status endpoint end to end, with real sockets on 127.0.0.1: stations relaying a fixture file, the endpoint
/// on port 0, requests written by hand.
@Suite(.timeLimit(.minutes(1))) struct StatusServerTests {
    typealias Answer = HTTPAnswer

    static func fetch(_ port: UInt16, _ request: String, wait: Double = 5) throws -> Answer {
        try httpFetch(port, request, wait: wait)
    }

    static func get(_ port: UInt16, _ path: String) throws -> Answer { try httpGet(port, path) }

    /// `count` stations on port 0 relaying a fixture file, started and relaying (format known).
    static func stations(_ count: Int) throws -> [Station] {
        let stations = try (0..<count).map { index in
            try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3")) { $0.name = "station-\(index)" }
        }
        for station in stations { try station.start() }
        let deadline = monotonicNow() + 10
        while stations.contains(where: { $0.state.format == nil }) && monotonicNow() < deadline { usleep(20_000) }
        return stations
    }

    static func endpoint(_ stations: [Station], configure: (inout StatusServer.Limits) -> Void = { _ in }) throws
        -> StatusServer
    {
        var limits = StatusServer.Limits()
        configure(&limits)
        let server = try StatusServer(
            address: SocketAddress(host: "127.0.0.1", port: 0)!, stations: stations, limits: limits)
        try server.start()
        return server
    }

    @Test(arguments: [1, 3]) func statusJSONListsEveryStationAsAnArray(count: Int) throws {
        let stations = try Self.stations(count)
        defer { for station in stations { station.stop() } }
        let server = try Self.endpoint(stations)
        defer { server.stop(timeout: 5) }
        // One listener comes and goes on the first station: now 0, peak 1.
        let listener = try ListenerClient(port: stations[0].port)
        _ = listener.read(for: 0.5)
        listener.close()
        let deadline = monotonicNow() + 5
        while stations[0].listeners > 0 && monotonicNow() < deadline { usleep(20_000) }

        let answer = try Self.get(server.address.port, "/status.json")
        #expect(answer.status == 200 && answer.closed)
        #expect(answer.head.contains("Content-Type: application/json") && answer.head.contains("Connection: close"))
        let json = try #require(JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        #expect(json["version"] as? String == RadioRelayVersion.string)
        #expect((json["uptime_seconds"] as? Double).map { $0 >= 0 && $0 < 60 } == true)
        let list = try #require(json["stations"] as? [[String: Any]])
        #expect(list.map { $0["name"] as? String } == stations.map(\.name))
        for station in list {
            #expect(station["upstream_state"] as? String == "connected")
            #expect(station["upstream_url"] as? String == Fixture.path("stereo-44k-128k.mp3"))
            #expect(station["opus_bitrate"] as? Int == 96_000)
            #expect((station["input"] as? [String: Any])?["sample_rate"] as? Int == 44_100)
            #expect(station["alive"] as? Bool == true)
        }
        #expect(list[0]["listeners"] as? Int == 0 && list[0]["peak_listeners"] as? Int == 1)
        #expect(list[0]["connections"] as? Int == 1 && (list[0]["bytes_out"] as? Int ?? 0) > 0)
    }

    @Test(.enabled(if: tool("promtool") != nil)) func metricsPassPromtool() throws {
        let stations = try Self.stations(3)
        defer { for station in stations { station.stop() } }
        let server = try Self.endpoint(stations)
        defer { server.stop(timeout: 5) }
        let answer = try Self.get(server.address.port, "/metrics")
        #expect(answer.status == 200)
        #expect(answer.head.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"))
        #expect(answer.text.contains("radio_relay_listeners{station=\"station-2\",rendition=\"main\"} 0"))
        let path = temporaryPath("metrics.txt")
        try Data(answer.body).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let check = try run("/bin/sh", ["-c", "\"$0\" check metrics < \"$1\"", try #require(tool("promtool")), path])
        #expect(check.status == 0, "promtool: \(check.stdout) \(check.stderr)")
        #expect(check.stdout.isEmpty && check.stderr.isEmpty, "promtool: \(check.stdout) \(check.stderr)")
    }

    @Test func refusesWhatItDoesNotServe() throws {
        let stations = try Self.stations(1)
        defer { for station in stations { station.stop() } }
        let server = try Self.endpoint(stations)
        defer { server.stop(timeout: 5) }
        let port = server.address.port
        let post = try Self.fetch(port, "POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")
        #expect(post.status == 405 && post.head.contains("\r\nAllow: GET, HEAD") && post.closed)
        #expect(try Self.get(port, "/nope").status == 404)
        #expect(try Self.fetch(port, "\u{16}\u{3}\u{1}garbage\r\n").status == 400)
        #expect(try Self.fetch(port, "GET / HTTP/1.1\r\n" + String(repeating: "X-A: b\r\n", count: 1200)).status == 431)
        #expect(try Self.fetch(port, "GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n").status == 414)
        let head = try Self.fetch(port, "HEAD /status.json HTTP/1.1\r\n\r\n")
        #expect(head.status == 200 && head.body.isEmpty && head.closed)
        #expect(try Self.get(port, "/health").status == 200)
        // It still serves after all that.
        #expect(try Self.get(port, "/status.json").status == 200)
    }

    @Test func closesASilentClientAfterTheTimeout() throws {
        let server = try Self.endpoint([]) { $0.headerTimeout = 0.5 }
        defer { server.stop(timeout: 5) }
        for request in ["", "GET /status.json HTTP/1.1\r\nHost: a\r\n"] {
            let client = try ListenerClient(port: server.address.port)
            defer { client.close() }
            client.send(request)
            let started = monotonicNow()
            let (bytes, closed) = client.read(for: 5)
            let elapsed = monotonicNow() - started
            #expect(closed && bytes.isEmpty, "\(request.debugDescription)")
            #expect(elapsed > 0.3 && elapsed < 3, "closed after \(elapsed) s")
        }
    }

    /// `status_token` and the Host rule over the wire, and a reload's new token in force for the next request.
    @Test func theTokenAndHostRuleApplyOverTheWire() throws {
        let server = try StatusServer(
            address: SocketAddress(host: "127.0.0.1", port: 0)!, stations: [],
            access: StatusAccess(token: StatusToken("first-token-0123456789")))
        try server.start()
        defer { server.stop(timeout: 5) }
        let port = server.address.port
        let bearer = { (token: String) in "Authorization: Bearer \(token)\r\n" }
        #expect(try Self.get(port, "/metrics").status == 401)
        let request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n" + bearer("first-token-0123456789") + "\r\n"
        #expect(try Self.fetch(port, request).status == 200)
        let rebound = "GET /status.json HTTP/1.1\r\nHost: evil.example\r\n" + bearer("first-token-0123456789") + "\r\n"
        #expect(try Self.fetch(port, rebound).status == 421)
        #expect(try Self.fetch(port, "GET /health HTTP/1.1\r\nHost: evil.example\r\n\r\n").status == 200)
        server.setAccess(StatusAccess(token: StatusToken("second-token-0123456789")))
        #expect(try Self.fetch(port, request).status == 401)
    }

    /// Every place taken by idle connections: a new request still gets its answer, and the oldest idle connection
    /// is the one closed for it.
    @Test func idleConnectionsGiveTheirPlaceToNewRequests() throws {
        let server = try Self.endpoint([]) { $0.maxConnections = 2 }
        defer { server.stop(timeout: 5) }
        let port = server.address.port
        // From two addresses, within each one's pending limit. Closed once, below: a second close could hit a
        // descriptor number that another test now uses.
        let oldest = try ListenerClient(port: port, source: "127.0.0.2")
        usleep(100_000)  // accepted first
        let newer = try ListenerClient(port: port, source: "127.0.0.3")
        defer {
            oldest.close()
            newer.close()
        }
        usleep(100_000)
        #expect(try Self.get(port, "/health").status == 200)
        let (bytes, closed) = oldest.read(for: 1)
        #expect(closed && bytes.isEmpty)
        let survivor = newer.read(for: 0.2)
        #expect(!survivor.closed)
    }

    /// One address may hold only `maxPendingPerAddress` unfinished requests: the next one from it closes its own
    /// oldest, so a health check from the address that holds idle connections (every client of an endpoint on
    /// 127.0.0.1 has one address) is answered, and another address's requests are never touched.
    @Test func aFullAddressGivesUpItsOwnOldestUnfinishedRequest() throws {
        let server = try Self.endpoint([]) { $0.maxPendingPerAddress = 2 }
        defer { server.stop(timeout: 5) }
        let port = server.address.port
        let other = try ListenerClient(port: port, source: "127.0.0.3")
        defer { other.close() }
        let idle = try (0..<2).map { _ in try ListenerClient(port: port, source: "127.0.0.2") }
        defer { for client in idle { client.close() } }
        usleep(100_000)  // accepted in this order
        let third = try ListenerClient(port: port, source: "127.0.0.2")
        defer { third.close() }
        let oldest = idle[0].read(for: 2)
        #expect(oldest.closed && oldest.bytes.isEmpty)
        #expect(!idle[1].read(for: 0.05).closed && !third.read(for: 0.05).closed)
        // A health check from the same address: its second-oldest gives way, the check is answered at once.
        let check = try ListenerClient(port: port, source: "127.0.0.2")
        defer { check.close() }
        let started = monotonicNow()
        check.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let answer = check.read(for: 2)
        #expect(String(decoding: answer.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
        #expect(monotonicNow() - started < 1)
        #expect(idle[1].read(for: 1).closed && !third.read(for: 0.05).closed)
        #expect(!other.read(for: 0.05).closed)
    }

    @Test func healthIs503WhileAStationDoesNotRun() throws {
        let running = try Self.stations(1)
        defer { for station in running { station.stop() } }
        let idle = try StationTests.station(upstream: Fixture.path("mono-48k.mp3")) { $0.name = "idle" }
        let server = try Self.endpoint(running + [idle]) { $0.healthAllowance = 1.5 }
        defer { server.stop(timeout: 5) }
        usleep(2_000_000)
        let health = try Self.get(server.address.port, "/health")
        #expect(health.status == 503)
        #expect(
            health.text == "unhealthy\nstation-0: alive (upstream connected)\nidle: stalled (upstream connecting)\n")
        let alone = try Self.endpoint(running) { $0.healthAllowance = 1.5 }
        defer { alone.stop(timeout: 5) }
        usleep(2_000_000)
        #expect(try Self.get(alone.address.port, "/health").status == 200)
    }

    @Test func serverBindsTheStatusAddressBeforeStarting() throws {
        func configuration(status: ListenAddress?) -> ServerConfiguration {
            var station = StationConfiguration()
            station.upstream = Fixture.path("mono-48k.mp3")
            station.broadcaster.bind = "127.0.0.1"
            station.broadcaster.port = 0
            var settings = ServerSettings.commandLine
            settings.status = status
            return ServerConfiguration(server: settings, stations: [station])
        }
        let server = try Server(
            configuration(status: ListenAddress(host: "127.0.0.1", port: 0)), budget: ListenerBudget())
        let address = try #require(server.status?.address)
        #expect(address.port != 0)
        // The port is taken now: a second endpoint on it fails at once, with the address in the error.
        #expect(throws: SystemError.self) {
            try Server(
                configuration(status: ListenAddress(host: "127.0.0.1", port: Int(address.port))),
                budget: ListenerBudget())
        }
        #expect(try Server(configuration(status: nil), budget: ListenerBudget()).status == nil)
    }
}
