import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: the binary and ffmpeg, light beside the other lane.
extension ServerProcessTests {
    /// `overflow`: a full station sends an HTTP listener to an edge's mount with `302 Found`, and a real player
    /// (ffmpeg, which follows redirects) plays the edge.
    @Suite struct OverflowTests {
        @Test(.enabled(if: tool("ffmpeg") != nil, "needs ffmpeg (`.ci/deps --test`)"))
        func theThirdListenerOfAStationCappedAtTwoPlaysAtTheEdge() throws {
            let (edgeHTTP, edgeStatus) = (try freePort(), try freePort())
            let root = try ServedStation([
                "--max-listeners", "2", "--overflow", "http://127.0.0.1:\(edgeHTTP)/edge.opus",
            ])
            defer { root.stop() }
            // The edge relays the root's raw port: its pull is the root's first listener.
            let edge = try ServerProcessTests.ServerProcess(arguments: [
                "serve", "--upstream", "tcp://127.0.0.1:\(root.port)", "--name", "edge", "--bind", "127.0.0.1",
                "--port", "\(try freePort())", "--http", "127.0.0.1:\(edgeHTTP)", "--status", "127.0.0.1:\(edgeStatus)",
            ])
            defer { edge.stop() }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline,
                (try? root.station().listeners) != 1 || (try? statusStations(edgeStatus).first?.upstream) != .connected
            {
                usleep(100_000)
            }
            #expect(try root.station().listeners == 1, "the edge's pull")
            // The second listener takes the last place.
            let second = try ListenerClient(port: root.http)
            defer { second.close() }
            second.send("GET /test.opus HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let (head, _) = second.read(for: 0.5)
            #expect(String(decoding: head.prefix(16), as: UTF8.self).contains(" 200"), "the second listener is served")
            // The third is sent to the edge's mount, and plays there.
            let redirected = try httpFetch(root.http, "GET /test.opus HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", wait: 1)
            #expect(redirected.status == 302, "\(redirected.head)")
            #expect(redirected.head.contains("Location: http://127.0.0.1:\(edgeHTTP)/edge.opus"))
            let played = try PeerTests.HLSPlayerTests.decode("http://127.0.0.1:\(root.http)/test.opus", seconds: 4)
            #expect(played.status == 0 && played.stderr.isEmpty, "ffmpeg: \(played.stderr)")
            #expect(played.tones.seconds >= 3.9, "\(played.tones.seconds) s decoded")
            #expect(
                abs(played.tones.left440 - 0.475) < 0.05 && abs(played.tones.right1000 - 0.475) < 0.05,
                "\(played.tones)")
            let snapshot = try statusSnapshot(root.status)
            #expect(snapshot.redirects == 2, "the raw fetch and ffmpeg")
            let edgeOutputs = try #require(try statusStations(edgeStatus).first?.outputs)
            #expect(edgeOutputs.map(\.connections).reduce(0, +) >= 1, "ffmpeg played the edge")
        }
    }
}
