import Foundation
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane (ffmpeg decodes the HLS stream).
extension PeerTests {
    /// Low-latency mode from the shipped binary (`--page-ms 10 --flush-ms 0 --latency low`): a raw listener gets a
    /// stream of 10 ms pages of one 10 ms frame, with the restricted low-delay application's 2.5 ms pre-skip, that
    /// decodes to the fixture's tones without a gap; the same packets make an HLS stream ffmpeg decodes.
    @Suite(.timeLimit(.minutes(2)))
    struct LowLatencyBinaryTests {
        @Test(.enabled(if: tool("ffmpeg") != nil, "needs ffmpeg"))
        func tenMillisecondPagesDecodeOverRawTCPAndHLS() throws {
            let station = try ServedStation(
                upstream: Fixture.path("stereo-44k-128k.mp3"),
                ["--page-ms", "10", "--flush-ms", "0", "--latency", "low", "--hls-segment", "1"])
            defer { station.stop() }
            try #require(waitUntil(10) { (try? station.station().upstream) == .connected }, "\(station.server.log)")
            let client = try ListenerClient(port: station.port)
            defer { client.close() }
            let capture = try LiveCapture(client.read(for: 3).bytes)
            #expect(capture.headerOK && capture.preSkip == 120, "pre-skip \(capture.preSkip)")
            #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            let steps = zip(capture.pages.dropFirst(3), capture.pages.dropFirst(4)).map {
                $1.header.granulePosition - $0.header.granulePosition
            }
            #expect(!steps.isEmpty && steps.allSatisfy { $0 == 480 }, "granule steps \(Set(steps))")
            #expect(abs(capture.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.05)
            #expect(abs(capture.medianAmplitude(left: false, frequency: 1000) - 0.475) < 0.05)

            let playlist = "/test/live.m3u8"
            try #require(
                waitUntil(20) {
                    let answer = try? httpFetch(station.http, "GET \(playlist) HTTP/1.0\r\n\r\n")
                    return (answer?.text.components(separatedBy: "#EXTINF:").count ?? 0) >= 4
                })
            let decoded = try HLSPlayerTests.decode("http://127.0.0.1:\(station.http)\(playlist)", seconds: 2)
            #expect(decoded.status == 0, "\(decoded.stderr)")
            #expect(decoded.tones.seconds >= 1.9 && decoded.tones.left440 > 0.4 && decoded.tones.right1000 > 0.4)
        }
    }
}
