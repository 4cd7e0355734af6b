import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: one real peer at a time.
extension PeerTests {
    /// Real players over HLS from the shipped binary: a station relaying the stereo fixture (440 Hz left, 1 kHz
    /// right) with a mono rendition, 1 s segments (a player starts three segments back: ready sooner); ffmpeg
    /// decodes its live playlist and both variants of its multivariant playlist, mpv plays it, Chromium plays it in
    /// a plain `<audio>`.
    @Suite struct HLSPlayerTests {
        /// A served station with a 32 kb/s mono rendition, once both outputs' playlists list three segments (a
        /// player starts three segments from the live edge).
        static func station() throws -> ServedStation {
            let rig = try ServedStation(
                upstream: Fixture.path("stereo-44k-128k.mp3"),
                ["--rendition", "low:\(try freePort()):32k:mono", "--hls-segment", "1"])
            let ready = waitUntil(20) {
                ["/test/live.m3u8", "/test-low/live.m3u8"].allSatisfy { path in
                    let answer = try? httpFetch(rig.http, "GET \(path) HTTP/1.0\r\n\r\n")
                    return (answer?.text.components(separatedBy: "#EXTINF:").count ?? 0) >= 4
                }
            }
            if !ready { rig.stop() }
            try #require(ready, "the playlists did not list three segments within 20 s")
            return rig
        }

        /// ffmpeg's decode of `url` (`-map` choosing a variant), as float stereo at 48 kHz.
        static func decode(_ url: String, seconds: Int, map: String? = nil) throws -> (
            status: Int32, stderr: String, tones: (left440: Double, right1000: Double, seconds: Double)
        ) {
            let directory = try HTTPPlayerTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let output = directory.appendingPathComponent("out.f32").path
            let result = try run(
                try #require(tool("ffmpeg")),
                ["-nostdin", "-v", "error", "-i", url] + (map.map { ["-map", $0] } ?? []) + [
                    "-t", "\(seconds)", "-f", "f32le", "-ac", "2", "-ar", "48000", output,
                ])
            let samples = HTTPPlayerTests.floats((try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data())
            return (result.status, result.stderr, HTTPPlayerTests.tones(interleaved: samples))
        }

        /// The players at once on one station (each is a real-time client; together they take as long as the
        /// longest): ffmpeg decodes the live playlist and each variant of the multivariant playlist, mpv plays the
        /// live playlist, Chromium plays it in an `<audio>` element.
        @Test(
            .enabled(
                if: tool("ffmpeg") != nil && tool("mpv") != nil && tool("chromium") != nil,
                "needs ffmpeg, mpv and chromium (`.ci/deps --test`)"))
        func playersPlayTheLivePlaylistAndBothVariants() throws {
            let rig = try Self.station()
            defer { rig.stop() }
            let base = "http://127.0.0.1:\(rig.http)/test"
            let live = Background { try Self.decode(base + "/live.m3u8", seconds: 8) }
            let stereo = Background { try Self.decode(base + "/master.m3u8", seconds: 3, map: "0:a:0") }
            let mono = Background { try Self.decode(base + "/master.m3u8", seconds: 3, map: "0:a:1") }
            let mpv = Background { try Self.play(base + "/live.m3u8", seconds: 5) }
            let chromium = try HTTPPlayerTests.playInChromium(base + "/live.m3u8")

            let ffmpeg = try live.value()
            #expect(ffmpeg.status == 0 && ffmpeg.stderr.isEmpty, "ffmpeg: \(ffmpeg.stderr)")
            #expect(ffmpeg.tones.seconds >= 7.9, "\(ffmpeg.tones.seconds) s decoded")
            #expect(
                abs(ffmpeg.tones.left440 - 0.475) < 0.05 && abs(ffmpeg.tones.right1000 - 0.475) < 0.05,
                "\(ffmpeg.tones)")
            // The multivariant playlist: the stereo output first, then the mono rendition.
            let first = try stereo.value()
            #expect(first.status == 0 && first.stderr.isEmpty, "ffmpeg: \(first.stderr)")
            #expect(first.tones.seconds >= 2.9 && abs(first.tones.left440 - 0.475) < 0.05, "\(first.tones)")
            let second = try mono.value()
            #expect(second.status == 0 && second.stderr.isEmpty, "ffmpeg: \(second.stderr)")
            // Mono is the two channels' mean (each tone at half its level), and ffmpeg's upmix puts it in both ears
            // at -3 dB: 0.475 / 2 / √2 = 0.168 each.
            #expect(second.tones.seconds >= 2.9, "\(second.tones)")
            #expect(
                abs(second.tones.left440 - 0.168) < 0.03 && abs(second.tones.right1000 - 0.168) < 0.03,
                "\(second.tones)")

            let played = try mpv.value()
            #expect(played.status == 0, "mpv: \(played.stderr)")
            #expect(played.tones.seconds >= 4.9, "\(played.tones.seconds) s played")
            #expect(
                abs(played.tones.left440 - 0.475) < 0.05 && abs(played.tones.right1000 - 0.475) < 0.05,
                "\(played.tones)")

            let advanced = try #require(chromium["advanced"] as? Double)
            let errors = try #require(chromium["errors"] as? [Any])
            #expect(errors.isEmpty, "\(errors)")
            #expect(advanced >= 9 && advanced <= 10.6, "currentTime advanced \(advanced) s in 10 s")
            #expect(chromium["paused"] as? Bool == false)
        }

        /// mpv's play of `url` for `seconds`, as float stereo at 48 kHz.
        static func play(_ url: String, seconds: Int) throws -> (
            status: Int32, stderr: String, tones: (left440: Double, right1000: Double, seconds: Double)
        ) {
            let directory = try HTTPPlayerTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let output = directory.appendingPathComponent("mpv.f32").path
            let result = try run(
                try #require(tool("mpv")),
                [
                    "--no-config", "--really-quiet", "--vo=null", "--ao=pcm", "--ao-pcm-file=\(output)",
                    "--ao-pcm-waveheader=no", "--audio-format=float", "--audio-samplerate=48000",
                    "--audio-channels=stereo", "--length=\(seconds)", url,
                ])
            let samples = HTTPPlayerTests.floats((try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data())
            return (result.status, result.stderr, HTTPPlayerTests.tones(interleaved: samples))
        }
    }
}
