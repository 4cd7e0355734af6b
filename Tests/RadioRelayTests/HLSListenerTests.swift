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
    /// HLS over real sockets, from a running station behind the front end: one connection carries the playlist
    /// and its segments one request after another; kept connections waiting for their next request are not pending
    /// heads (a CDN's few addresses are never throttled) and close after the keep-alive timeout.
    @Suite struct HLSListenerTests {
        typealias Rig = HTTPListenerTests.Rig

        /// One whole response read from `client` (the head, and a body of its `Content-Length`), within `seconds`.
        static func response(_ client: ListenerClient, seconds: Double = 3) -> (head: String, body: [UInt8]) {
            var bytes: [UInt8] = []
            let deadline = Date().addingTimeInterval(seconds)
            let separator = Array("\r\n\r\n".utf8)
            while Date() < deadline {
                if let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) {
                    let head = String(decoding: bytes[..<end], as: UTF8.self)
                    let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
                    let bodyStart = end + 4
                    if let length, bytes.count >= bodyStart + length || head.hasPrefix("HTTP/1.1 304") {
                        return (head, Array(bytes[bodyStart...]))
                    }
                }
                let (more, closed) = client.read(for: 0.05)
                bytes += more
                if closed { break }
            }
            return (String(decoding: bytes, as: UTF8.self), [])
        }

        /// The names a playlist lists (segments and init segments).
        static func names(_ playlist: [UInt8]) -> (segments: [String], maps: [String]) {
            let lines = String(decoding: playlist, as: UTF8.self).split(separator: "\n").map(String.init)
            let maps = lines.filter { $0.hasPrefix("#EXT-X-MAP:URI=\"") }.map { String($0.dropFirst(16).dropLast()) }
            return (lines.filter { !$0.hasPrefix("#") }, maps)
        }

        /// Half-second segments: the first ones are there sooner.
        static func configure(_ configuration: inout StationConfiguration) {
            configuration.hlsSettings.segmentSeconds = 0.5
        }

        @Test func oneConnectionCarriesThePlaylistAndItsSegments() throws {
            let rig = try Rig(configure: Self.configure)
            defer { rig.stop() }
            let stream = try #require(rig.station.outputs[0].hls)
            #expect(waitUntil(10) { stream.snapshot.segments.count >= 2 })
            let client = try ListenerClient(port: rig.port)
            defer { client.close() }
            client.send("GET /test/live.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n")
            let playlist = Self.response(client)
            #expect(playlist.head.hasPrefix("HTTP/1.1 200 OK") && playlist.head.contains("Connection: keep-alive"))
            let (segments, maps) = Self.names(playlist.body)
            #expect(segments.count >= 2 && maps.count == 1)
            var fetched: [[UInt8]] = []
            for name in maps + segments {
                client.send("GET /test/\(name) HTTP/1.1\r\nHost: x\r\n\r\n")
                let answer = Self.response(client)
                #expect(answer.head.hasPrefix("HTTP/1.1 200 OK"), "\(name): \(answer.head)")
                fetched.append(answer.body)
            }
            // Each is the stream's own bytes: an init segment (ftyp) and media segments (moof).
            #expect(fetched.first.map { Array($0[4..<8]) } == Array("ftyp".utf8))
            #expect(fetched.dropFirst().allSatisfy { $0.count > 8 && Array($0[4..<8]) == Array("moof".utf8) })
            // A name that is not there: 404, counted apart from the answers (status and metrics show both).
            client.send("GET /test/\(stream.token)-1.m4s HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(Self.response(client).head.hasPrefix("HTTP/1.1 404 Not Found"))
            #expect(stream.answered.load(ordering: .relaxed) == 1 + maps.count + segments.count)
            #expect(stream.notFound.load(ordering: .relaxed) == 1)
            let report = HLSStatus(stream)
            #expect(report.segments >= 2 && report.heldBytes >= fetched.reduce(0) { $0 + $1.count })
            // The connection is still there, and closes at the client's word.
            client.send("HEAD /test/live.m3u8 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let last = client.read(for: 2)
            #expect(String(decoding: last.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK") && last.closed)
        }

        @Test func keptConnectionsHoldNoPendingPlaceAndCloseWhenIdle() throws {
            var limits = HTTPFront.Limits()
            limits.maxPendingPerAddress = 2
            limits.keepAliveTimeout = 3
            let rig = try Rig(limits: limits, configure: Self.configure)
            defer { rig.stop() }
            let stream = try #require(rig.station.outputs[0].hls)
            #expect(waitUntil(10) { !stream.snapshot.playlist.isEmpty })
            // Ten kept connections from one address, five times its pending limit, each opened and answered in turn
            // as a CDN's are: once answered, a connection holds no pending place.
            var clients: [ListenerClient] = []
            defer { for client in clients { client.close() } }
            for _ in 0..<10 {
                let client = try ListenerClient(port: rig.port, source: "127.0.0.2")
                clients.append(client)
                client.send("GET /test/live.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(Self.response(client).head.hasPrefix("HTTP/1.1 200 OK"))
            }
            // Each asks again on its connection: still answered.
            for client in clients {
                client.send("GET /test/master.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(Self.response(client).head.hasPrefix("HTTP/1.1 200 OK"))
            }
            // Idle past the keep-alive timeout: closed by the server.
            let closed = clients.map { $0.read(for: 4).closed }
            #expect(closed.allSatisfy { $0 }, "\(closed)")
        }
    }
}
