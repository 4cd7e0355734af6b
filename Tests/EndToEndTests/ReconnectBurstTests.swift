import Foundation
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: an upstream that bursts on every reconnect, against the real binary.
extension ServerProcessTests {
    @Suite(.timeLimit(.minutes(2)), .serialized) struct ReconnectBurstTests {
        /// An upstream that sends 6 s at once on every connection (Icecast's burst on connect after each reconnect),
        /// then real time for 6 s, then drops the connection. A listener that reads as the audio comes stays connected,
        /// is never moved, and the stream's position against its wall clock stays where it was after 5 s (the lead
        /// bounds it; the bursts' excess is dropped). The rule is proven on virtual time for 20 s bursts
        /// (StreamClockTests); here three reconnects in 25 s show the real process keeps it.
        @Test func aBurstOnEveryReconnectCostsAListenerNothing() throws {
            // The fixture's first frame is its LAME Info tag, which carries no audio: repeated as it is, the copies
            // would carry a frame less audio each than their bytes' pace (0.85 % slow), and the stream would drift that
            // way between the bursts. A live upstream sends audio at real time, so the tag goes.
            let fixture = try Fixture.bytes("stereo-44k-128k.mp3")
            #expect(String(decoding: fixture[36..<40], as: UTF8.self) == "Info")
            // The tag's frame length: 144 × 128 000 / 44 100 (MPEG-1 layer III), padding bit from the header.
            let tag = 144 * 128_000 / 44_100 + Int((fixture[2] >> 1) & 1)
            let audio = Array(fixture[tag...])
            let body = Array([[UInt8]](repeating: audio, count: 4).joined())  // 12 s
            let upstream = try HTTPTestServer { _ in
                var response = HTTPTestServer.Response(body: body, pace: 16_000)
                response.burst = 6 * 16_000
                return response
            }
            defer { upstream.stop() }
            let server = try ServerProcess(arguments: [
                "serve", "--upstream", upstream.baseURL + "/live.mp3", "--bind", "127.0.0.1", "--port",
                "\(try freePort())", "--name", "bursty", "--burst", "0",
            ])
            defer { server.stop() }
            try #require(waitUntil(10) { server.log.contains("bursty: upstream") }, "\(server.log)")
            let client = try ListenerClient(port: server.port)
            defer { client.close() }
            var received: [UInt8] = []
            var offsets: [(at: Double, offset: Double)] = []
            let start = Date()
            var firstGranule: Int64?
            while Date().timeIntervalSince(start) < 26 {
                let (chunk, closed) = client.read(for: 0.5)
                // When the bytes came, not after decoding everything received so far (which takes longer as the capture
                // grows), which would show as a drift of the stream.
                let elapsed = Date().timeIntervalSince(start)
                received += chunk
                #expect(!closed, "disconnected after \(Date().timeIntervalSince(start)) s")
                if closed { break }
                let capture = try LiveCapture(received)
                guard capture.lastGranule > 0 else { continue }
                if firstGranule == nil { firstGranule = capture.firstAudioGranule }
                let audioSeconds = Double(capture.lastGranule - (firstGranule ?? 0)) / 48_000
                offsets.append((elapsed, audioSeconds - elapsed))
            }
            let capture = try LiveCapture(received)
            #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            // The highest offset over a few seconds: reads, 300 ms flushes and 100 ms pages each add their own jitter.
            // Late, the highest from 12 s on, which spans the third connection's burst and what follows: during an
            // outage the lead is spent before silence fills in (the offset sinks by the lead plus the jitter allowance,
            // as it should), and the reconnect back-off grows with each ended connection (1, 2, then about 6 s), so
            // the last seconds alone may all fall in one outage (they did in one run of three: -0.29 s against 0.82 s).
            let early = try #require(offsets.filter { (2...5).contains($0.at) }.map(\.offset).max())
            let late = try #require(offsets.filter { $0.at >= 12 }.map(\.offset).max())
            print(
                "bursts on reconnect: stream ahead of the listener's clock \(early) s after 5 s, at most \(late) s from 12 s"
            )
            #expect(abs(late - early) < 0.5, "after 5 s \(early) s, from 12 s \(late) s\n\(server.log)")
            let log = server.log
            #expect(log.components(separatedBy: "bursty: upstream connected").count - 1 >= 3, "\(log)")
            #expect(log.contains("dropped"), "no burst was dropped:\n\(log)")
            #expect(!log.contains("moved to the live edge") && !log.contains("too slow"), "\(log)")
        }
    }
}
