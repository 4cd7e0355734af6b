import Foundation
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: the binary and ffmpeg, light beside the other lane.
extension ServerProcessTests {
    /// `max_listener_duration`: a listener's stream ends after the limit at a page (or MP3 frame) boundary, so a real
    /// player decodes it to its last sample without an error, and the end is counted.
    @Suite struct SessionLimitTests {
        @Test(.enabled(if: tool("ffmpeg") != nil, "needs ffmpeg (`.ci/deps --test`)"))
        func aTenSecondLimitEndsAnFFmpegListenersStreamCleanly() throws {
            let station = try ServedStation(["--max-listener-duration", "10", "--mp3", "yes"])
            defer { station.stop() }
            let base = "http://127.0.0.1:\(station.http)/test"
            let started = Date()
            // Both at once: the Opus mount and the MP3 pass-through (whole frames), each asked for 30 s.
            let opus = Background { try PeerTests.HLSPlayerTests.decode(base + ".opus", seconds: 30) }
            let mp3 = Background { try PeerTests.HLSPlayerTests.decode(base + ".mp3", seconds: 30) }
            let raw = try ListenerClient(port: station.port)
            defer { raw.close() }
            var rawBytes: [UInt8] = []
            var rawClosed = false
            while !rawClosed && Date().timeIntervalSince(started) < 25 {
                let (chunk, closed) = raw.read(for: 0.5)
                rawBytes += chunk
                rawClosed = closed
            }
            for (name, result) in [("opus", try opus.value()), ("mp3", try mp3.value())] {
                // ffmpeg 5.1 reports the end of any HTTP body without a length as "Stream ends prematurely ...
                // Input/output error" (Icecast's ends, a file served by HTTP/1.0 and closed, alike); nothing else may
                // appear: no decoding error at the cut.
                let other = result.stderr.split(separator: "\n").filter {
                    !$0.contains("Stream ends prematurely") && !$0.hasSuffix("Input/output error")
                }
                #expect(result.status == 0 && other.isEmpty, "\(name): ffmpeg: \(result.stderr)")
                // Ten seconds at real time, and the 2 s burst it was sent at once.
                #expect(
                    result.tones.seconds > 10.5 && result.tones.seconds < 13.5, "\(name): \(result.tones.seconds) s")
                #expect(
                    abs(result.tones.left440 - 0.475) < 0.05 && abs(result.tones.right1000 - 0.475) < 0.05,
                    "\(name): \(result.tones)")
            }
            #expect(Date().timeIntervalSince(started) < 20, "the streams ended at the limit, not at ffmpeg's -t")
            // The raw listener's stream ends after a whole Ogg page: every page it got is complete and in sequence.
            #expect(rawClosed)
            let capture = try LiveCapture(rawBytes)
            #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            #expect(capture.pages.map(\.bytes.count).reduce(0, +) == rawBytes.count, "no partial page at the end")
            #expect(Double(capture.left.count) / 48_000 > 10.5)
            let outputs = try station.station().outputs
            #expect(outputs.map(\.sessionLimitEnds).reduce(0, +) == 3, "\(outputs.map(\.sessionLimitEnds))")
            #expect(station.server.logged("session limit (10 s, max_listener_duration)"))
        }
    }
}
