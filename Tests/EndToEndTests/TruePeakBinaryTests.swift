import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane (ffmpeg makes the source, listens, and measures): the true-peak limiter.
extension PeerTests {
    /// A source clipped 3 dB over full scale (its MP3 decodes at +3.9 dBTP), played by two stations side by side, one
    /// with the default `true_peak = -1` and one with `true_peak = off`: an ffmpeg listener's decoded output, measured
    /// by ffmpeg's own `ebur128` (`peak=true`), stays under −1 dBTP with the limiter (the codec's overshoot at 96k
    /// included) and passes 0 dBTP without it.
    @Suite(.timeLimit(.minutes(2)))
    struct TruePeakBinaryTests {
        /// 30 s of two tones per channel driven 4 dB into a clipper at +3 dBFS, as MP3 (float in: nothing clips
        /// before the encoder).
        static func clippedSource() throws -> String {
            let path = temporaryPath("clipped-plus3.mp3")
            let clip = "\\,-1.4125\\,1.4125)"
            let result = try run(
                try #require(tool("ffmpeg")),
                [
                    "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                    "aevalsrc=exprs='clip(1.6*sin(2*PI*997*t)+0.5*sin(2*PI*3001*t)\(clip)"
                        + "|clip(1.6*sin(2*PI*441*t)+0.5*sin(2*PI*5003*t)\(clip)':s=44100:d=30",
                    "-c:a", "libmp3lame", "-b:a", "128k", "-y", path,
                ])
            try #require(result.status == 0, "\(result.stderr)")
            return path
        }

        /// ffmpeg's `ebur128` true peak of a file ffmpeg can read (raw: `input` is the arguments before `-i`), dBTP.
        static func truePeak(_ path: String, input: [String] = []) throws -> Double {
            let result = try run(
                try #require(tool("ffmpeg")),
                ["-hide_banner", "-nostdin"] + input + ["-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"])
            let lines = result.stderr.split(separator: "\n")
            let heading = try #require(lines.lastIndex { $0.contains("True peak:") }, "\(result.stderr.suffix(500))")
            let words = try #require(lines.dropFirst(heading + 1).first).split(separator: " ")
            return try #require(words.firstIndex(of: "Peak:").flatMap { Double(words[$0 + 1]) })
        }

        /// An ffmpeg listener writing `seconds` of the station's decoded audio as raw float, in the background.
        static func listen(_ station: ServedStation, to path: String, seconds: Int) throws -> Process {
            let listener = Process()
            listener.executableURL = URL(fileURLWithPath: try #require(tool("ffmpeg")))
            listener.arguments = [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-i", "http://127.0.0.1:\(station.http)/test.opus",
                "-t", "\(seconds)", "-ac", "2", "-ar", "48000", "-f", "f32le", "-y", path,
            ]
            listener.standardInput = FileHandle.nullDevice
            listener.standardOutput = FileHandle.nullDevice
            listener.standardError = FileHandle.nullDevice
            try listener.run()
            return listener
        }

        @Test(.enabled(if: tool("ffmpeg") != nil, "needs ffmpeg"))
        func aClippedSourceIsHeardUnderTheCeiling() throws {
            let source = try Self.clippedSource()
            defer { try? FileManager.default.removeItem(atPath: source) }
            let sourcePeak = try Self.truePeak(source)
            #expect(sourcePeak > 3, "the source is hot: \(sourcePeak) dBTP")
            let limited = try ServedStation(upstream: source)
            defer { limited.stop() }
            let unlimited = try ServedStation(upstream: source, ["--true-peak", "off"])
            defer { unlimited.stop() }
            let captures = [temporaryPath("limited.f32"), temporaryPath("unlimited.f32")]
            defer { for capture in captures { try? FileManager.default.removeItem(atPath: capture) } }
            let listeners = try zip([limited, unlimited], captures).map { try Self.listen($0, to: $1, seconds: 8) }
            defer {
                for listener in listeners where listener.isRunning { kill(listener.processIdentifier, SIGKILL) }
            }
            try #require(waitUntil(30) { listeners.allSatisfy { !$0.isRunning } })
            #expect(listeners.allSatisfy { $0.terminationStatus == 0 })

            // The limiter in status and /metrics; none on the station without one.
            let shown = try #require(try limited.station().limiter)
            #expect(abs(shown.ceiling - -2.3) < 0.05, "−1 dBTP less 1.3 dB for 96k stereo: \(shown.ceiling)")
            #expect(shown.reduction < -3 && shown.limitedSeconds > 5, "\(shown)")
            #expect(try unlimited.station().limiter == nil)
            let metrics = try httpFetch(limited.status, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").text
            #expect(metrics.contains("radio_relay_limiter_reduction_db{station=\"test\"} -"), "\(metrics.prefix(300))")
            #expect(metrics.contains("radio_relay_limiter_limited_seconds_total{station=\"test\"} "))

            let raw = ["-f", "f32le", "-ar", "48000", "-ac", "2"]
            let heard = try Self.truePeak(captures[0], input: raw)
            let heardOff = try Self.truePeak(captures[1], input: raw)
            print("true peak: source \(sourcePeak) dBTP, heard \(heard) dBTP with true_peak -1, \(heardOff) off")
            #expect(heard <= -1.0, "with the limiter: \(heard) dBTP")
            #expect(heardOff > 0, "without it the clipping is heard: \(heardOff) dBTP")
        }
    }
}
