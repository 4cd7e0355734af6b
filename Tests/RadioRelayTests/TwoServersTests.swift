import Foundation
import Glibc
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// In the serialized `RealTimeTests` chain: its tests block threads on real time.
extension RealTimeTests {
    /// Nothing of a server is global: two servers in one process, each built from its own configuration, each with
    /// its own network loops, access log, stations, HTTP front end and status endpoint, sharing the one listener
    /// budget the process derived; one is stopped by a call while the other goes on serving.
    @Suite struct TwoServersTests {
        static func configuration(_ name: String, accessLog: String) -> ServerConfiguration {
            var station = StationConfiguration()
            station.name = name
            station.upstream = Fixture.path("stereo-44k-128k.mp3")
            station.broadcaster.bind = "127.0.0.1"
            station.broadcaster.port = 0
            var settings = ServerSettings.commandLine
            settings.status = ListenAddress(host: "127.0.0.1", port: 0)
            settings.http = ListenAddress(host: "127.0.0.1", port: 0)
            settings.networkThreads = 2
            settings.accessLog = accessLog
            return ServerConfiguration(server: settings, stations: [station])
        }

        @Test func twoServersInOneProcess() throws {
            let directory = temporaryPath("two-servers")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let budget = ListenerBudget(limit: 100)
            let first = try Server(
                Self.configuration("one", accessLog: directory + "/one.log"), budget: budget)
            let second = try Server(
                Self.configuration("two", accessLog: directory + "/two.log"), budget: budget)
            try first.start()
            var firstRunning = true
            defer { if firstRunning { first.stop() } }
            try second.start()
            defer { second.stop() }
            // Their own parts: nothing shared but the budget.
            #expect(first.pool !== second.pool && first.accessLog !== second.accessLog)
            #expect(first.stations[0].broadcaster.pool === first.pool)
            #expect(second.stations[0].broadcaster.pool === second.pool)
            #expect(first.budget === second.budget)
            let listeners = try [first, second].map { server in
                try ListenerClient(port: server.stations[0].port)
            }
            for (index, listener) in listeners.enumerated() {
                let capture = try LiveCapture(listener.read(for: 1).bytes)
                #expect(capture.headerOK, "server \(index)")
            }
            #expect(budget.open.load(ordering: .relaxed) == 2)
            for server in [first, second] {
                let health = try httpGet(try #require(server.status).address.port, "/health")
                #expect(health.status == 200 && health.text.contains(server.stations[0].name), "\(health.text)")
                let (head, body, _) = try httpExchange(
                    try #require(server.http).address.port,
                    "GET /\(server.stations[0].name).opus HTTP/1.1\r\nHost: x\r\n\r\n", seconds: 0.5)
                let capture = try LiveCapture(body)
                #expect(head.hasPrefix("HTTP/1.1 200 OK") && capture.headerOK)
            }
            // The first stops by a call: its listener is closed and its lines are in its own access log; the second
            // goes on serving.
            #expect(first.stop())
            firstRunning = false
            #expect(listeners[0].read(for: 2).closed)
            let more = listeners[1].read(for: 0.5)
            #expect(!more.closed && !more.bytes.isEmpty)
            for listener in listeners { listener.close() }
            let lines = try String(contentsOfFile: directory + "/one.log", encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 2 && lines.allSatisfy { $0.hasPrefix("127.0.0.1 \(ListenerID.run)-") }, "\(lines)")
            #expect(FileManager.default.fileExists(atPath: directory + "/two.log"))
            #expect(waitUntil(5) { budget.open.load(ordering: .relaxed) == 0 })
        }
    }
}
