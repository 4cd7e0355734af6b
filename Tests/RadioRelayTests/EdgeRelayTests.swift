import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// In the serialized `RealTimeTests` chain: its tests block threads on real time (sockets, players), and too many
/// at once starve the rest of the suite on two cores.
extension RealTimeTests {
    /// An edge station relaying a root station over `tcp://` with real sockets: the root transcodes the stereo fixture
    /// (440 Hz left, 1 kHz right); the edge passes its Opus packets on without decoding, re-paged into its own stream.
    @Suite(.serialized) struct EdgeRelayTests {
        static func root(port: UInt16) throws -> Station {
            var configuration = StationConfiguration()
            configuration.name = "root"
            configuration.upstream = Fixture.path("stereo-44k-128k.mp3")
            configuration.broadcaster.bind = "127.0.0.1"
            configuration.broadcaster.port = Int(port)
            return try Station(configuration)
        }

        /// Audio packets of a capture, in order (the two header packets left out).
        static func audioPackets(_ bytes: [UInt8]) throws -> [[UInt8]] {
            var reader = OggPageReader()
            reader.append(bytes)
            var packets: [[UInt8]] = []
            while let page = try reader.next() { packets += page.packets }
            return Array(packets.dropFirst(2))
        }

        @Test(
            .enabled(if: tool("oggz-validate") != nil, "needs oggz-validate (Debian: oggz-tools; `.ci/deps --test`)"),
            .enabled(if: tool("opusinfo") != nil, "needs opusinfo (Debian: opus-tools; `.ci/deps --test`)"))
        func anEdgeRelaysTheRootPacketForPacketAcrossARootRestart() throws {
            let rootPort = try freePort()
            var root: Station? = try Self.root(port: rootPort)
            try root?.start()
            var edgeConfiguration = StationConfiguration()
            edgeConfiguration.name = "edge"
            edgeConfiguration.upstream = "tcp://127.0.0.1:\(rootPort)"
            edgeConfiguration.broadcaster.bind = "127.0.0.1"
            edgeConfiguration.broadcaster.port = 0
            edgeConfiguration.reconnectDelay = 0.5...1
            let edge = try Station(edgeConfiguration)
            try edge.start()
            defer { edge.stop() }
            // The root's own listener and the edge's, side by side for 4 s.
            usleep(1_500_000)
            let rootListener = try ListenerClient(port: rootPort)
            let edgeListener = try ListenerClient(port: edge.port)
            defer { edgeListener.close() }
            let rootBytes = rootListener.read(for: 4).bytes
            rootListener.close()
            var edgeBytes = edgeListener.read(for: 0.1).bytes
            edgeBytes += edgeListener.read(for: 3.9).bytes
            // The root restarts (a new process would do the same: a new Ogg serial), 2 s away.
            root?.stop()
            root = nil  // its listening socket closes with it
            let outageStarted = Date()
            edgeBytes += edgeListener.read(for: 2).bytes
            let restarted = try Self.root(port: rootPort)
            try restarted.start()
            defer { restarted.stop() }
            edgeBytes += edgeListener.read(for: 5).bytes
            let outage = Date().timeIntervalSince(outageStarted) - 5

            // Packet for packet: the root's packets, in order, inside the edge's stream.
            let rootPackets = try Self.audioPackets(rootBytes)
            let edgePackets = try Self.audioPackets(edgeBytes)
            let probe = Array(rootPackets.suffix(100).prefix(50))
            try #require(probe.count == 50, "the root's listener got \(rootPackets.count) packets")
            let at = edgePackets.indices.first { index in
                index + probe.count <= edgePackets.count && Array(edgePackets[index..<index + probe.count]) == probe
            }
            #expect(at != nil, "50 consecutive root packets are not found in the edge's stream")

            // One logical stream of the edge's own: one serial (not the root's), continuous pages and granules.
            let capture = try LiveCapture(edgeBytes)
            #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            var reader = OggPageReader()
            reader.append(edgeBytes)
            var serials = Set<UInt32>()
            while let page = try reader.next() { serials.insert(page.header.serial) }
            var rootReader = OggPageReader()
            rootReader.append(rootBytes)
            let rootSerial = try #require(try rootReader.next()).header.serial
            #expect(serials.count == 1 && !serials.contains(rootSerial))
            #expect(edge.state.reconnects >= 1)

            // Real validators on the whole capture (its last page flagged as the end).
            let file = temporaryPath("edge.opus")
            defer { try? FileManager.default.removeItem(atPath: file) }
            try Data(try ChainedCapture.closed(edgeBytes)).write(to: URL(fileURLWithPath: file))
            let validate = try run(try #require(tool("oggz-validate")), [file])
            #expect(validate.status == 0, "oggz-validate: \(validate.stdout) \(validate.stderr)")
            // opusinfo's only complaint may be the one gap every live capture has: the join (headers, then the burst).
            let info = try run(try #require(tool("opusinfo")), [file])
            let warnings = (info.stdout + info.stderr).split(separator: "\n").filter {
                $0.contains("WARNING") || $0.contains("ERROR") || $0.contains("rror")
            }
            let joinGap = warnings.filter {
                $0.contains("sequence number gap") || $0.contains("discontinuity in stream")
            }
            #expect(warnings.count == joinGap.count && joinGap.count <= 2, "opusinfo: \(info.stdout) \(info.stderr)")
            #expect(info.stdout.contains("Channels: 2") && info.stdout.contains("Logical stream 1 ended"))

            // The tone everywhere but the outage: 0.2 s windows without the 440 Hz tone add up to the outage at most.
            let windows = capture.amplitudes(left: true, frequency: 440).compactMap(Double.init)
            let quiet = Double(windows.filter { $0 < 0.1 }.count) * 0.2
            print(
                "edge: \(edgePackets.count) packets, quiet \(quiet) s for an outage of \(String(format: "%.2f", outage)) s"
            )
            #expect(quiet > 0.5 && quiet <= outage + 1.5, "quiet \(quiet) s, outage \(outage) s")
            #expect(capture.medianAmplitude(left: false, frequency: 1000) > 0.4)
        }

        /// An edge pulling a root's HTTP mount (`http://…/NAME.opus`, answered `audio/ogg`): the root chains a link per
        /// ICY title, the edge keeps one logical stream of its own and shows the root's titles as its own.
        @Test func anEdgeOnARootsHTTPMountFollowsItsTitles() throws {
            let audio = try Fixture.bytes("stereo-44k-128k.mp3")
            let titles = [2: "Root Song One", 10: "Root Song Two"]
            let body = icyStream(audio + audio + audio + audio, interval: 8192) { titles[$0] }
            let upstream = try HTTPTestServer { _ in
                .init(headers: ["Content-Type": "audio/mpeg", "icy-metaint": "8192"], body: body, pace: 16_400)
            }
            defer { upstream.stop() }
            let root = try StationTests.station(upstream: upstream.baseURL + "/live.mp3") {
                $0.name = "root"
                $0.chainTitles = true
            }
            let front = try HTTPFront(address: SocketAddress(host: "127.0.0.1", port: 0)!, stations: [root])
            try root.start()
            defer { root.stop() }
            try front.start()
            defer { front.stop(timeout: 5) }
            var edgeConfiguration = StationConfiguration()
            edgeConfiguration.name = "edge"
            edgeConfiguration.upstream = "http://127.0.0.1:\(front.address.port)/root.opus"
            edgeConfiguration.broadcaster.bind = "127.0.0.1"
            edgeConfiguration.broadcaster.port = 0
            let edge = try Station(edgeConfiguration)
            try edge.start()
            defer { edge.stop() }
            let listener = try ListenerClient(port: edge.port)
            defer { listener.close() }
            var bytes: [UInt8] = []
            var seen: [String] = []
            let deadline = Date().addingTimeInterval(9)
            while Date() < deadline {
                bytes += listener.read(for: 0.25).bytes
                if let title = edge.state.title, seen.last != title { seen.append(title) }
                if seen.contains("Root Song Two") { break }
            }
            #expect(seen == ["Root Song One", "Root Song Two"], "the edge showed \(seen)")
            #expect(root.state.title == "Root Song Two")
            // The root's links (one per title) reach the edge as one stream of the edge's own.
            var reader = OggPageReader()
            reader.append(bytes)
            var serials = Set<UInt32>()
            while let page = try reader.next() { serials.insert(page.header.serial) }
            #expect(serials.count == 1)
            let capture = try LiveCapture(bytes)
            #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            #expect(abs(capture.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.06)
        }
    }
}
