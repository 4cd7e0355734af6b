import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: one real peer at a time.
extension PeerTests {
    /// Real players over HTTP: ffmpeg, mpv and a headless Chromium each play a station's mount from the front end and
    /// must get the right audio (the stereo fixture: 440 Hz left, 1 kHz right) without an error.
    @Suite struct HTTPPlayerTests {
        /// Median tone amplitudes of interleaved float stereo, per 0.2 s window, after the first 0.2 s.
        static func tones(interleaved samples: [Float]) -> (left440: Double, right1000: Double, seconds: Double) {
            var left: [Float] = []
            var right: [Float] = []
            left.reserveCapacity(samples.count / 2)
            right.reserveCapacity(samples.count / 2)
            var index = 0
            while index + 1 < samples.count {
                left.append(samples[index])
                right.append(samples[index + 1])
                index += 2
            }
            func median(_ channel: [Float], _ frequency: Double) -> Double {
                var values: [Double] = []
                var start = 9_600
                while start + 9_600 <= channel.count {
                    values.append(
                        toneAmplitude(channel, frequency: frequency, rate: 48_000, range: start..<start + 9_600))
                    start += 9_600
                }
                return values.isEmpty ? 0 : values.sorted()[values.count / 2]
            }
            return (median(left, 440), median(right, 1000), Double(left.count) / 48_000)
        }

        static func floats(_ data: Data) -> [Float] {
            data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        }

        static func temporaryDirectory() throws -> URL {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("rr-http-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        }

        /// ffmpeg and mpv at once on one station (real-time clients: together they take as long as one).
        @Test(
            .enabled(if: tool("ffmpeg") != nil && tool("mpv") != nil, "needs ffmpeg and mpv (`.ci/deps --test`)"))
        func ffmpegAndMpvEachPlayTenSecondsOfTheMount() throws {
            let rig = try ServedStation()
            defer { rig.stop() }
            let url = "http://127.0.0.1:\(rig.http)/test.opus"
            let mpv = Background { try HLSPlayerTests.play(url, seconds: 10) }
            let ffmpeg = try HLSPlayerTests.decode(url, seconds: 10)
            #expect(ffmpeg.status == 0)
            #expect(ffmpeg.stderr.isEmpty, "ffmpeg: \(ffmpeg.stderr)")
            #expect(ffmpeg.tones.seconds >= 9.9, "\(ffmpeg.tones.seconds) s decoded")
            #expect(
                abs(ffmpeg.tones.left440 - 0.475) < 0.05 && abs(ffmpeg.tones.right1000 - 0.475) < 0.05,
                "\(ffmpeg.tones)")
            let played = try mpv.value()
            #expect(played.status == 0, "mpv: \(played.stderr)")
            #expect(played.tones.seconds >= 9.9, "\(played.tones.seconds) s played")
            #expect(
                abs(played.tones.left440 - 0.475) < 0.05 && abs(played.tones.right1000 - 0.475) < 0.05,
                "\(played.tones)")
        }

        /// A page with `<audio src="STREAM">` in headless Chromium (`ChromiumAudioPage`): its report, 10 s after
        /// playback began (`whilePlaying` runs once it came, the browser still playing).
        static func playInChromium(_ stream: String, whilePlaying: () throws -> Void = {}) throws -> [String: Any] {
            let page = try ChromiumAudioPage(stream: stream)
            defer { page.stop() }
            return try page.play(whilePlaying: whilePlaying)
        }

        @Test(.enabled(if: tool("chromium") != nil, "needs chromium (Debian: chromium; `.ci/deps --test`)"))
        func chromiumPlaysTheMount() throws {
            let rig = try ServedStation()
            defer { rig.stop() }
            var station = StationStatus(name: "")
            let json = try Self.playInChromium("http://127.0.0.1:\(rig.http)/test.opus") { station = try rig.station() }
            let advanced = try #require(json["advanced"] as? Double)
            let errors = try #require(json["errors"] as? [Any])
            #expect(errors.isEmpty, "\(errors)")
            #expect(advanced >= 8, "currentTime advanced \(advanced) s")
            #expect((json["wall"] as? Double ?? 0) <= 10.5)
            #expect(json["paused"] as? Bool == false)
            // Still playing: the status endpoint counts it as an HTTP listener.
            let output = try #require(station.outputs.first)
            #expect(station.httpListeners >= 1, "\(station)")
            #expect(output.mount == "test.opus" && output.httpListeners >= 1)
        }
    }
}
