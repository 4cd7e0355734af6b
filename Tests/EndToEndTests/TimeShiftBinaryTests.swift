import Foundation
import Glibc
import RadioRelay
import RadioRelaySystem
import RadioRelayTestSupport
import Testing

/// Time-shifted listening on the binary: a station whose upstream changes tone every 3 s (six tones, an 18 s loop)
/// archived in 10 s files; ffmpeg reads `?start=` at four moments across three files, and a client `?offset=` (from
/// the moment its `X-Archive-Start` names, checked against the wall clock around its request); each decodes the tone
/// of its moment (Goertzel, 100 ms windows): the place in the 18 s loop each one hears, less the moment it asked for,
/// is the same for all of them. One reader goes on across a file boundary and follows the schedule tone by tone; the
/// MP3 mount's archive reads too; a moment outside the archive is a 416 with the range, a malformed one a 400.
extension DiskTests {
    @Suite(.timeLimit(.minutes(2))) struct TimeShiftBinaryTests {
        static let tones = [400.0, 600, 800, 1000, 1200, 1400]
        static let step = 3.0
        static var loop: Double { step * Double(tones.count) }

        /// The tone schedule as an MP3 (both channels).
        static func scheduleFile() throws -> String {
            let path = temporaryPath("schedule.mp3")
            var arguments = ["-hide_banner", "-loglevel", "error"]
            for tone in tones {
                arguments += ["-f", "lavfi", "-i", "sine=frequency=\(Int(tone)):duration=\(Int(step))"]
            }
            arguments += [
                "-filter_complex", "concat=n=\(tones.count):v=0:a=1", "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k",
                "-y", path,
            ]
            let made = try run(try #require(tool("ffmpeg")), arguments)
            try #require(made.status == 0, "\(made.stderr)")
            return path
        }

        /// `seconds` of `url` decoded by ffmpeg, mono 48 kHz.
        static func decode(_ url: String, seconds: Double) throws -> [Float] {
            let path = temporaryPath("shift.f32")
            defer { unlink(path) }
            let result = try run(
                try #require(tool("ffmpeg")),
                ["-v", "error", "-i", url, "-t", "\(seconds)", "-f", "f32le", "-ac", "1", "-ar", "48000", "-y", path])
            #expect(result.status == 0, "ffmpeg \(url): \(result.stderr)")
            let data = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
            return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        }

        /// The tone of each 100 ms window (its index in `tones`; -1: none clearly).
        static func windows(_ samples: [Float]) -> [Int] {
            stride(from: 0, to: samples.count - 4800 + 1, by: 4800).map { start in
                let levels = tones.map {
                    toneAmplitude(samples, frequency: $0, rate: 48_000, range: start..<start + 4800)
                }
                let best = levels.indices.max { levels[$0] < levels[$1] } ?? 0
                return levels[best] > 0.05 ? best : -1
            }
        }

        /// Where in the loop the first window is (seconds), from the first change of tone.
        static func phase(_ windows: [Int]) -> Double? {
            guard let first = windows.first, first >= 0,
                let change = windows.firstIndex(where: { $0 != first }), windows[change] == (first + 1) % tones.count
            else { return nil }
            let untilChange = Double(change) * 0.1
            return (Double(first) * step + step - untilChange).truncatingRemainder(dividingBy: loop)
        }

        /// `a - b` on the loop's circle, in -loop/2 ..< loop/2.
        static func circular(_ a: Double, _ b: Double) -> Double {
            var d = (a - b).truncatingRemainder(dividingBy: loop)
            if d >= loop / 2 { d -= loop }
            if d < -loop / 2 { d += loop }
            return d
        }

        /// What `/test.opus?offset=behind` on `port` plays from (its `X-Archive-Start`, checked against the wall
        /// clock around the request) and its first 4 s, decoded.
        static func fromOffset(port: UInt16, behind: Double) throws -> (moment: Double, windows: [Int]) {
            let client = try ListenerClient(port: port)
            defer { client.close() }
            let before = Date().timeIntervalSince1970
            client.send("GET /test.opus?offset=\(Int(behind)) HTTP/1.0\r\n\r\n")
            var heard = client.read(atLeast: 1, within: 10).bytes
            let answered = Date().timeIntervalSince1970
            heard += client.read(for: 4).bytes
            let blank = Array("\r\n\r\n".utf8)
            let end = try #require(
                heard.indices.first { heard[$0...].starts(with: blank) },
                "\(String(decoding: heard.prefix(400), as: UTF8.self))")
            let head = String(decoding: heard[..<end], as: UTF8.self)
            let field = try #require(
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("x-archive-start: ") }, "\(head)")
            // A whole second has no decimals.
            let text = String(field.dropFirst("x-archive-start: ".count))
            let formatter = ISO8601DateFormatter()
            if text.contains(".") { formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds] }
            let moment = try #require(formatter.date(from: text), "\(text)").timeIntervalSince1970
            #expect(
                moment >= before - behind - 0.001 && moment <= answered - behind + 0.001,
                "\(text): asked between \(before - behind) and \(answered - behind)")
            let saved = temporaryPath("offset.ogg")
            defer { unlink(saved) }
            #expect(FileManager.default.createFile(atPath: saved, contents: Data(heard[(end + blank.count)...])))
            return (moment, windows(try decode(saved, seconds: 4)))
        }

        /// What mpv plays of `url` from `seconds` in (a seek: `--start`), 4 s, decoded. A tone lasts 3 s: 4 s hold a
        /// change of tone wherever they start, which `phase` needs (3 s did not when the seek fell on a change).
        static func mpvWindows(_ url: String, from seconds: Int) throws -> [Int] {
            let wav = temporaryPath("mpv.wav")
            defer { unlink(wav) }
            let played = try run(
                try #require(tool("mpv")),
                [
                    "--no-config", "--really-quiet", "--vo=null", "--ao=pcm", "--ao-pcm-file=\(wav)",
                    "--start=\(seconds)",
                    "--length=4", url,
                ])
            #expect(played.status == 0, "mpv \(url): \(played.stdout) \(played.stderr)")
            return windows(try decode(wav, seconds: 4))
        }

        static func iso(_ unix: Double) -> String {
            let millis = Int64(unix * 1000)
            let text = UTCTime(Double(millis / 1000)).iso8601
            let fraction = String(format: "%03d", Int(millis % 1000))
            return String(text.prefix(19)) + ".\(fraction)Z"
        }

        @Test(
            .enabled(if: tool("ffmpeg") != nil && tool("curl") != nil && tool("mpv") != nil, "needs ffmpeg, curl, mpv"))
        func eachMomentDecodesTheToneThatWasLiveThen() throws {
            let directory = temporaryPath("shift-archive")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = try Self.scheduleFile()
            defer { unlink(file) }
            let http = try freePort()
            let status = try freePort()
            let server = try ServerProcessTests.ServerProcess(arguments: [
                "serve", "--upstream", file, "--name", "test", "--bind", "127.0.0.1", "--port", "\(try freePort())",
                "--http", "127.0.0.1:\(http)", "--status", "127.0.0.1:\(status)", "--mp3", "yes", "--archive",
                directory, "--archive-span", "10",
            ])
            defer { server.stop() }
            var oldest = 0.0
            #expect(
                waitUntil(60) {
                    guard let archive = (try? statusStations(status))?.first?.archive, let first = archive.oldest,
                        let newest = archive.newest
                    else { return false }
                    oldest = first
                    return newest - first >= 24
                }, "\(server.log)")
            let base = "http://127.0.0.1:\(http)/test.opus"
            // Four moments across three files: what each hears, less its moment, is one constant.
            var offsets: [Double] = []
            for moment in [oldest + 1.5, oldest + 6.2, oldest + 11.9, oldest + 16.3] {
                let heard = Self.windows(try Self.decode("\(base)?start=\(Self.iso(moment))", seconds: 4))
                let phase = try #require(Self.phase(heard), "start=\(Self.iso(moment)): \(heard)")
                offsets.append(Self.circular(phase, moment.truncatingRemainder(dividingBy: Self.loop)))
            }
            // `offset=` asks for a moment behind the wall clock when the request comes. The answer names it
            // (`X-Archive-Start`): 12 s before a moment between the request and its answer. What is heard from it is
            // the same constant.
            let behind = 12.0
            let (asked, heard) = try Self.fromOffset(port: http, behind: behind)
            let phase = try #require(Self.phase(heard), "offset=\(Int(behind)): \(heard)")
            let fromOffset = Self.circular(phase, asked.truncatingRemainder(dividingBy: Self.loop))
            print("time shift: phase less moment \(offsets.map { String(format: "%.2f", $0) }) offset= \(fromOffset)")
            for value in offsets + [fromOffset] {
                #expect(abs(Self.circular(value, offsets[0])) <= 0.3, "\(offsets) \(fromOffset)")
            }
            // One reader from a moment 2 s before a file boundary on: every tone in order, each 3 s (the first and
            // last cut), none missing, no window without a tone.
            let boundary = (oldest / 10).rounded(.up) * 10 + 10
            let long = Self.windows(try Self.decode("\(base)?start=\(Self.iso(boundary - 2))", seconds: 9))
            #expect(!long.contains(-1), "\(long)")
            var runs: [(tone: Int, windows: Int)] = []
            for tone in long {
                if let last = runs.last, last.tone == tone {
                    runs[runs.count - 1].windows += 1
                } else {
                    runs.append((tone, 1))
                }
            }
            for (previous, next) in zip(runs, runs.dropFirst()) {
                #expect(next.tone == (previous.tone + 1) % Self.tones.count, "\(runs)")
            }
            for run in runs.dropFirst().dropLast() { #expect((29...31).contains(run.windows), "\(runs)") }
            // The archive's HLS, from a segment on (a closed playlist from `start=`): ffmpeg plays the same moment.
            let segment = (oldest / 10).rounded(.up) * 10 + 10
            let playlist = try httpGet(http, "/test/archive.m3u8?start=\(Self.iso(segment))")
            #expect(playlist.status == 200 && playlist.text.contains("#EXT-X-ENDLIST"), "\(playlist.text)")
            let fromHLS = Self.windows(
                try Self.decode("http://127.0.0.1:\(http)/test/archive.m3u8?start=\(Self.iso(segment))", seconds: 4))
            let hlsPhase = try #require(Self.phase(fromHLS), "archive HLS: \(fromHLS)")
            let fromSegment = Self.circular(hlsPhase, segment.truncatingRemainder(dividingBy: Self.loop))
            #expect(abs(Self.circular(fromSegment, offsets[0])) <= 0.3, "HLS \(fromSegment), stream \(offsets)")
            // The same in MPEG-TS (`archive-ts.m3u8`), which ffmpeg's HLS demuxer, and so mpv, seeks in: mpv seeks 12 s
            // into it and hears that moment.
            let seeked = try Self.mpvWindows(
                "http://127.0.0.1:\(http)/test/archive-ts.m3u8?start=\(Self.iso(segment))", from: 12)
            let mpvPhase = try #require(Self.phase(seeked), "mpv in archive-ts.m3u8: \(seeked)")
            let fromSeek = Self.circular(mpvPhase, (segment + 12).truncatingRemainder(dividingBy: Self.loop))
            print(
                "time shift: phase less moment from the archive's HLS \(fromSegment), from mpv's seek in MPEG-TS \(fromSeek)"
            )
            #expect(abs(Self.circular(fromSeek, offsets[0])) <= 0.3, "mpv \(fromSeek), stream \(offsets)")
            // The MP3 mount's archive; a moment before the archive; a malformed one.
            let mp3 = Self.windows(try Self.decode("http://127.0.0.1:\(http)/test.mp3?offset=10", seconds: 3))
            // The first frame's bit reservoir is in the frame before it: it decodes to silence, as for a live MP3
            // listener joining. After it, every window has a tone, in the schedule's order, but for a window across a
            // change of tone, which may hold half of each and neither clearly (the MP3 frames do not fall on the
            // windows as the Opus pages do).
            print("time shift: the MP3 archive's windows \(mp3)")
            let afterFirst = Array(mp3.dropFirst())
            #expect(afterFirst.count >= 28, "\(mp3)")
            for (index, window) in afterFirst.enumerated() where window < 0 {
                let before = afterFirst[..<index].last { $0 >= 0 }
                let after = afterFirst[(index + 1)...].first { $0 >= 0 }
                #expect(before != nil && after != nil && before != after, "an unclear window not at a change: \(mp3)")
            }
            let clear = afterFirst.filter { $0 >= 0 }
            for (previous, next) in zip(clear, clear.dropFirst()) where previous != next {
                #expect(next == (previous + 1) % Self.tones.count, "\(mp3)")
            }
            #expect(afterFirst.count - clear.count <= 2, "\(mp3)")
            let early = try httpGet(http, "/test.opus?start=2001-01-01T00:00:00Z")
            #expect(early.status == 416 && early.text.contains("it holds"), "\(early.text)")
            #expect(try httpGet(http, "/test.opus?offset=-5").status == 400)
            #expect(server.logged("time-shifted listener"), "\(server.log)")
            // What the archive holds, with the URL that plays each file from its start.
            let listing = try httpGet(http, "/test/archive.json")
            #expect(listing.status == 200, "\(listing.text)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(listing.text.utf8)) as? [String: Any])
            let files = try #require(json["files"] as? [[String: Any]])
            #expect(files.count >= 3 && json["mount"] as? String == "/test.opus", "\(listing.text)")
            let oldestFile = try #require(files.last?["listen"] as? String)
            #expect(oldestFile.hasPrefix("/test.opus?start="))
            let fromFile = Self.windows(try Self.decode("http://127.0.0.1:\(http)\(oldestFile)", seconds: 2))
            #expect(fromFile.count >= 19 && !fromFile.contains(-1), "\(oldestFile): \(fromFile)")
        }
    }
}
