import Foundation
import Glibc
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

extension RealTimeTests {
    /// One admission point for every kind of listener, over real sockets: a station with its Opus mount, its MP3
    /// pass-through mount and HLS, the public HTTP front end, an access log in a file; one rule added in one place.
    @Suite struct AdmissionPointTests {
        final class Rig: @unchecked Sendable {
            let station: Station
            let front: HTTPFront
            let admission = ListenerAdmission()
            let accessLog = AccessLog()
            let directory = temporaryPath("admission")

            init(_ configure: (inout StationConfiguration) -> Void = { _ in }) throws {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                accessLog.open(path: directory + "/access.log")
                var configuration = StationConfiguration()
                configuration.name = "test"
                configuration.upstream = Fixture.path("stereo-44k-128k.mp3")
                configuration.broadcaster.bind = "127.0.0.1"
                configuration.broadcaster.port = 0
                configuration.mp3 = true
                configuration.hlsSettings.segmentSeconds = 1
                configure(&configuration)
                station = try Station(
                    configuration, services: ListenerServices(accessLog: accessLog, admission: admission))
                front = try HTTPFront(address: SocketAddress(host: "127.0.0.1", port: 0)!, stations: [station])
                try station.start()
                do {
                    try front.start()
                } catch {
                    station.stop()
                    throw error
                }
            }

            var port: UInt16 { front.address.port }

            func get(_ path: String, agent: String, seconds: Double = 1) throws -> (head: String, body: [UInt8]) {
                let (head, body, _) = try httpExchange(
                    port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: \(agent)\r\n\r\n", seconds: seconds)
                return (head, body)
            }

            func stop() {
                front.stop(timeout: 5)
                station.stop()
                accessLog.stop()
                try? FileManager.default.removeItem(atPath: directory)
            }
        }

        static let paths = ["/test.opus", "/test.mp3", "/test/live.m3u8", "/test/events"]

        @Test func oneRuleRefusesEveryKindOfHTTPListenerAndAnAddressRuleRefusesRawTCP() throws {
            let rig = try Rig()
            defer { rig.stop() }
            #expect(
                try waitUntil(20) { try rig.get("/test/live.m3u8", agent: "Good/1.0").head.hasPrefix("HTTP/1.1 200") })
            rig.admission.setPolicy(AdmissionPolicy(rules: [.refuseUserAgent(prefix: "Blocked/1.0")]))
            for path in Self.paths {
                let refused = try rig.get(path, agent: "Blocked/1.0 (X11)")
                #expect(refused.head.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "\(path): \(refused.head)")
                let admitted = try rig.get(path, agent: "Good/1.0")
                #expect(admitted.head.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(path): \(admitted.head)")
                #expect(!admitted.body.isEmpty, "\(path)")
            }
            // Raw TCP passes the same point with no request: an address rule closes it before a byte is sent.
            let raw = try ListenerClient(port: rig.station.broadcaster.address.port)
            #expect(raw.read(for: 1).bytes.count > 0)
            raw.close()
            let loopback = try #require(AddressRange("127.0.0.0/8"))
            rig.admission.setPolicy(AdmissionPolicy(rules: [.refuseAddresses(loopback)]))
            let refused = try ListenerClient(port: rig.station.broadcaster.address.port)
            let read = refused.read(for: 2)
            #expect(read.bytes.isEmpty && read.closed)
            refused.close()
            #expect(try rig.get("/test.opus", agent: "Good/1.0").head.hasPrefix("HTTP/1.1 403"))
            #expect(rig.station.broadcaster.counters.snapshot.rejected >= 3)
        }

        @Test func everyKindIsListedWithItsIDAndTheAccessLogNamesItWhenItLeaves() throws {
            let rig = try Rig()
            defer { rig.stop() }
            #expect(
                try waitUntil(20) { try rig.get("/test/live.m3u8", agent: "Player/2").head.hasPrefix("HTTP/1.1 200") })
            let raw = try ListenerClient(port: rig.station.broadcaster.address.port)
            let http = try ListenerClient(port: rig.port)
            http.send("GET /test.mp3 HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Lister/1\r\n\r\n")
            let events = try ListenerClient(port: rig.port)
            events.send("GET /test/events HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Titles/3\r\n\r\n")
            _ = raw.read(for: 0.5)
            _ = http.read(for: 0.5)
            _ = events.read(for: 0.2)
            var snapshot = StatusSnapshot(stations: [rig.station], uptime: 1, alive: [true], loops: [])
            snapshot.list(rig.admission.roster)
            let listed = snapshot.listeners
            #expect(snapshot.listenersTotal == 4)
            #expect(Set(listed.map(\.kind)) == [.tcp, .http, .hls, .events])
            #expect(Set(listed.map(\.id)).count == 4 && listed.map(\.id) == listed.map(\.id).sorted())
            #expect(listed.allSatisfy { $0.address == "127.0.0.1" && $0.station == "test" })
            let byKind = Dictionary(uniqueKeysWithValues: listed.map { ($0.kind, $0) })
            #expect(byKind[.tcp]?.mount == "/test.opus" && byKind[.tcp]?.userAgent == nil)
            #expect(byKind[.http]?.mount == "/test.mp3" && byKind[.http]?.userAgent == "Lister/1")
            #expect(byKind[.hls]?.userAgent == "Player/2" && byKind[.events]?.userAgent == "Titles/3")
            #expect((byKind[.tcp]?.bytes ?? 0) > 0 && (byKind[.http]?.bytes ?? 0) > 0 && (byKind[.hls]?.bytes ?? 0) > 0)
            let json = StatusReport.json(snapshot)
            let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
            #expect((object?["listeners"] as? [Any])?.count == 4)
            // Each that leaves is out of the list, and its access-log line carries its ID.
            let httpID = try #require(byKind[.http]?.id)
            let rawID = try #require(byKind[.tcp]?.id)
            let eventsID = try #require(byKind[.events]?.id)
            http.close()
            raw.close()
            events.close()
            #expect(waitUntil(5) { rig.admission.roster.count == 1 })
            #expect(rig.accessLog.flush(timeout: 5) == 0)
            let lines = try String(contentsOfFile: rig.directory + "/access.log", encoding: .utf8)
                .split(separator: "\n")
            for (id, request) in [
                (httpID, "\"GET /test.mp3 HTTP/1.1\""), (rawID, "\"TCP /test.opus\""),
                (eventsID, "\"GET /test/events HTTP/1.1\""),
            ] {
                #expect(lines.contains { $0.contains(" \(ListenerID.run)-\(id) ") && $0.contains(request) }, "\(lines)")
            }
        }

        /// `max_listeners` is the station's, across its outputs and protocols: raw TCP on its Opus output, HTTP on
        /// its MP3 output and HLS sessions share it; a station that is full sends HTTP listeners and HLS players
        /// alike to its overflow URLs.
        @Test func maxListenersIsTheStationsAcrossOutputsAndHLS() throws {
            let rig = try Rig { $0.broadcaster.maxListeners = 2 }
            defer { rig.stop() }
            // The first HLS player's session takes one place.
            #expect(
                try waitUntil(20) { try rig.get("/test/live.m3u8", agent: "Player/1").head.hasPrefix("HTTP/1.1 200") })
            let raw = try ListenerClient(port: rig.station.broadcaster.address.port)
            #expect(raw.read(for: 0.5).bytes.count > 0)
            #expect(rig.station.broadcaster.audience.count == 2)
            for (path, agent) in [("/test.mp3", "Lister/1"), ("/test/live.m3u8", "Player/2"), ("/test.opus", "L/2")] {
                let full = try rig.get(path, agent: agent)
                #expect(full.head.hasPrefix("HTTP/1.1 503"), "\(path): \(full.head)")
            }
            // The same player again is its session, not a new one.
            #expect(try rig.get("/test/live.m3u8", agent: "Player/1").head.hasPrefix("HTTP/1.1 200"))
            let edge = "http://edge.example:8001/test.opus"
            rig.admission.setPolicy(AdmissionPolicy(overflow: ["test": [edge]]))
            for (path, agent) in [("/test.mp3", "Lister/1"), ("/test/live.m3u8", "Player/2")] {
                let sent = try rig.get(path, agent: agent)
                #expect(sent.head.hasPrefix("HTTP/1.1 302") && sent.head.contains("Location: \(edge)"), "\(sent.head)")
            }
            raw.close()
            #expect(waitUntil(5) { rig.station.broadcaster.audience.count == 1 })
            let admitted = try rig.get("/test.mp3", agent: "Lister/1")
            #expect(admitted.head.hasPrefix("HTTP/1.1 200"), "\(admitted.head)")
            #expect(
                rig.station.outputs.map { $0.broadcaster.audience }.allSatisfy {
                    $0 === rig.station.broadcaster.audience
                })
        }
    }
}
