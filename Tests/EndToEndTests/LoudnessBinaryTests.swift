import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane (ffmpeg decodes and measures): one loudness across inputs.
extension PeerTests {
    /// A station with `loudness = -16` and two inputs 20 LU apart (a primary near −10 LUFS, a hot-standby backup near
    /// −30): an ffmpeg listener's decoded output, measured by ffmpeg's own `ebur128` filter, is at −16 LUFS ±1 LU on
    /// each input once its gain settled, and right after each forced switch (the standby was normalised before it was
    /// needed).
    @Suite(.timeLimit(.minutes(2)))
    struct LoudnessBinaryTests {
        /// 60 s of a `frequency` Hz stereo tone at ffmpeg's sine level changed by `gain` dB, as MP3.
        static func tone(_ frequency: Int, gain: Int) throws -> String {
            let path = temporaryPath("tone-\(frequency)-\(gain)dB.mp3")
            let result = try run(
                try #require(tool("ffmpeg")),
                [
                    "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                    "sine=frequency=\(frequency):sample_rate=44100:duration=60", "-af", "volume=\(gain)dB", "-ac", "2",
                    "-c:a", "libmp3lame", "-b:a", "128k", "-y", path,
                ])
            try #require(result.status == 0, "\(result.stderr)")
            return path
        }

        /// ffmpeg's `ebur128` short-term loudness (the last 3 s) of raw stereo float samples at 48 kHz, every 0.1 s.
        static func shortTerm(_ path: String) throws -> [(time: Double, loudness: Double)] {
            let result = try run(
                try #require(tool("ffmpeg")),
                [
                    "-hide_banner", "-nostdin", "-f", "f32le", "-ar", "48000", "-ac", "2", "-i", path, "-af", "ebur128",
                    "-f", "null", "-",
                ])
            var out: [(Double, Double)] = []
            for line in result.stderr.split(separator: "\n") where line.contains(" t: ") && line.contains(" S: ") {
                let words = line.split(separator: " ")
                guard let t = words.firstIndex(of: "t:").flatMap({ Double(words[$0 + 1]) }),
                    let s = words.firstIndex(of: "S:").flatMap({ Double(words[$0 + 1]) })
                else { continue }
                out.append((t, s))
            }
            return out
        }

        @Test(.enabled(if: tool("ffmpeg") != nil, "needs ffmpeg"))
        func everyInputIsHeardAtTheTarget() throws {
            let files = [try Self.tone(440, gain: 12), try Self.tone(660, gain: -8)]  // −10.2 and −30.0 LUFS (ebur128)
            defer { for file in files { try? FileManager.default.removeItem(atPath: file) } }
            let station = try ServedStation(
                upstream: files[0], ["--upstream", files[1], "--standby", "hot", "--loudness", "-16"])
            defer { station.stop() }
            try #require(waitUntil(10) { (try? station.station().playingInput) == "1" }, "\(station.server.log)")
            let capture = temporaryPath("loudness.f32")
            defer { try? FileManager.default.removeItem(atPath: capture) }
            let listener = Process()
            listener.executableURL = URL(fileURLWithPath: try #require(tool("ffmpeg")))
            listener.arguments = [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-i", "http://127.0.0.1:\(station.http)/test.opus",
                "-ac", "2", "-ar", "48000", "-f", "f32le", "-y", capture,
            ]
            listener.standardInput = FileHandle.nullDevice
            listener.standardOutput = FileHandle.nullDevice
            listener.standardError = FileHandle.nullDevice
            try listener.run()
            defer {
                if listener.isRunning { kill(listener.processIdentifier, SIGKILL) }
                listener.waitUntilExit()
            }
            func seconds() -> Double {
                let bytes = (try? FileManager.default.attributesOfItem(atPath: capture)[.size] as? Int) ?? 0
                return Double(bytes) / (48_000 * 8)
            }
            func force(_ input: String) throws -> Double {
                let answer = try httpFetch(
                    station.status, "POST /stations/test/force/\(input) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                try #require(answer.status == 200, "\(answer.text)")
                try #require(waitUntil(5) { (try? station.station().playingInput) == input })
                return seconds()
            }
            try #require(waitUntil(20) { seconds() > 10 })
            let toBackup = try force("2")
            try #require(waitUntil(20) { seconds() > toBackup + 10 })
            let toPrimary = try force("1")
            try #require(waitUntil(20) { seconds() > toPrimary + 8 })
            #expect(listener.isRunning, "the listener was disconnected")
            // Each input's stage in status and /metrics: −10.2 LUFS brought down 5.8 dB, −30.0 up 14.
            let gains = try station.station().inputs.map { $0.loudness?.gain ?? .nan }
            #expect(gains.count == 2 && abs(gains[0] - -5.8) < 0.5 && abs(gains[1] - 14) < 0.5, "\(gains)")
            let metrics = try httpFetch(station.status, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").text
            #expect(
                metrics.contains("radio_relay_input_gain_db{station=\"test\",input=\"2\"} 1"), "\(metrics.prefix(300))")
            if listener.isRunning { kill(listener.processIdentifier, SIGKILL) }
            listener.waitUntilExit()

            let measured = try Self.shortTerm(capture)
            func window(_ from: Double, _ to: Double) -> [Double] {
                measured.filter { $0.time >= from && $0.time <= to }.map(\.loudness)
            }
            let windows = [
                ("primary (−10 LUFS in), settled", window(7, toBackup)),
                ("backup (−30 LUFS in), after the switch", window(toBackup + 4, toBackup + 10)),
                ("primary again, after the switch back", window(toPrimary + 4, toPrimary + 8)),
            ]
            for (name, values) in windows {
                let low = values.min() ?? .nan
                let high = values.max() ?? .nan
                print(
                    "loudness \(name): short-term \(String(format: "%.1f", low)) to \(String(format: "%.1f", high)) LUFS"
                )
                #expect(!values.isEmpty && low >= -17 && high <= -15, "\(name): \(values)")
            }
        }
    }
}
