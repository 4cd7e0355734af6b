import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: the binary with `record_live` and `record_live_source`, and three shows of a
/// real source client (ffmpeg): an Ogg Opus one with a hostile `ice-name` and an MP3 one, each killed with SIGKILL
/// mid-show, then an MP3 one on the air when the server stops. Each show is a file of its own that oggz-validate
/// and opusinfo pass and ffmpeg decodes whole, as long as the show was on the air (its hand-back's tail included),
/// and the source's own bytes beside it ffprobe without an error.
extension DiskTests {
    @Suite(.timeLimit(.minutes(2)))
    struct RecordingBinaryTests {
        static let password = "hackme-record-1"

        /// Seconds of 48 kHz audio ffmpeg decodes from `path`.
        static func seconds(_ path: String) throws -> Double {
            let raw = temporaryPath("recording.raw")
            defer { try? FileManager.default.removeItem(atPath: raw) }
            let result = try run(
                try #require(tool("ffmpeg")),
                ["-v", "error", "-i", path, "-f", "s16le", "-ac", "2", "-ar", "48000", "-y", raw])
            #expect(result.status == 0 && result.stderr.isEmpty, "ffmpeg \(path): \(result.stderr)")
            return Double(try FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int ?? 0) / 4 / 48_000
        }

        /// The DJ's tone in the recording at `path`: its longest run (seconds), and how much of the recording comes
        /// after its end — the rest of the hand-back's crossfade into the programme (440 Hz on the left), at most the
        /// stream clock's lead and a page.
        static func tones(_ path: String, dj: Double) throws -> (run: Double, after: Double) {
            let decoded = try decodeOpus([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            let timeline = ToneTimeline(decoded.left, rate: 48_000, tones: [440, dj])
            let runs = timeline.segments.filter { $0.tone == dj }
            let end = runs.map(\.end).max() ?? 0
            return (runs.map(\.length).max() ?? 0, decoded.duration - end)
        }

        /// A source copy: ffprobe reads it without an error.
        static func probe(_ path: String) throws {
            let probe = try run(try #require(tool("ffprobe")), ["-v", "error", path])
            #expect(probe.status == 0 && probe.stderr.isEmpty, "ffprobe \(path): \(probe.stderr)")
        }

        /// The files of the folder with `suffix`, sorted.
        static func files(_ folder: String, _ suffix: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(suffix) }
                .sorted()
        }

        /// One show: the source plays until the recorder is writing and `seconds` more, then is killed; the seconds
        /// it was on the air (from the takeover to the hand-back, as the switches in the status say).
        static func show(_ station: ServedStation, _ source: SourceClient, seconds: Double, files: Int) throws
            -> Double
        {
            defer { source.stop() }
            #expect(waitUntil(10) { (try? station.station())?.recordings?.current != nil }, "\(station.server.log)")
            usleep(UInt32(seconds * 1_000_000))
            source.stop()  // SIGKILL: no goodbye
            #expect(
                waitUntil(15) {
                    let recordings = try? station.station().recordings
                    return recordings?.state == "idle" && recordings?.files == files && recordings?.sourceFiles == files
                }, "\(station.server.log)")
            let switches = try station.station().switches
            let on = try #require(switches.last { $0.to == "live" }?.at)
            let off = try #require(switches.last { $0.from == "live" }?.at)
            return off - on
        }

        @Test(.enabled(if: tool("oggz-validate") != nil && tool("opusinfo") != nil, "needs oggz-tools, opus-tools"))
        func eachShowIsAWholeFileWithTheSourcesBytesBesideIt() throws {
            let directory = temporaryPath("recordings-e2e")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let station = try ServedStation([
                "--source-password", Self.password, "--source-timeout", "3", "--record-live", directory,
                "--record-live-source", "yes",
            ])
            defer { station.stop() }
            let folder = directory + "/test"
            let opus = try SourceClient.ffmpeg(
                port: station.http, password: Self.password, mount: "/test", frequency: 660, seconds: 60, opus: true,
                name: "Morning Show/../../etc")
            let first = try Self.show(station, opus, seconds: 4, files: 1)
            let mp3 = try SourceClient.ffmpeg(
                port: station.http, password: Self.password, mount: "/test", frequency: 880, seconds: 60, opus: false)
            let second = try Self.show(station, mp3, seconds: 3, files: 2)
            // A third show, on the air when the server stops: it finishes its files before it exits.
            let last = try SourceClient.ffmpeg(
                port: station.http, password: Self.password, mount: "/test", frequency: 550, seconds: 60, opus: false,
                name: "Late")
            defer { last.stop() }
            #expect(waitUntil(10) { (try? station.station())?.recordings?.current != nil })
            usleep(2_000_000)
            let status = try #require(try station.station().recordings)
            #expect(status.directory == folder && status.state == "recording" && status.files == 2)
            #expect(status.pagesDropped == 0 && status.writeErrors == 0 && status.currentSource != nil)
            let metrics = try httpGet(station.status, "/metrics").text
            for line in [
                "radio_relay_recording_active{station=\"test\"} 1",
                "radio_relay_recording_files_total{station=\"test\"} 2",
                "radio_relay_recording_dropped_pages_total{station=\"test\"} 0",
            ] {
                #expect(metrics.contains(line + "\n"), "\(line)")
            }
            station.stop()
            let log = station.server.log
            let recordings = Self.files(folder, ".opus")
            try #require(recordings.count == 3, "\(recordings) \(log)")
            #expect(recordings[0].hasSuffix("Z_Morning-Show-etc.opus"), "\(recordings)")
            #expect(recordings[1].hasSuffix("Z_live.opus") && recordings[2].hasSuffix("Z_Late.opus"), "\(recordings)")
            #expect(Self.files(folder, ".ogg") == [recordings[0].replacingOccurrences(of: ".opus", with: ".ogg")])
            #expect(
                Self.files(folder, ".mp3")
                    == [recordings[1], recordings[2]].map {
                        $0.replacingOccurrences(of: ".opus", with: ".mp3")
                    })
            for (name, (onAir, dj)) in zip(recordings, [(first, 660.0), (second, 880.0)]) {
                try ArchiveBinaryTests.checkOpus(folder + "/" + name)
                let length = try Self.seconds(folder + "/" + name)
                let heard = try Self.tones(folder + "/" + name, dj: dj)
                print(
                    "recording \(name): \(length) s decoded, on the air \(onAir) s, DJ \(heard.run) s + \(heard.after) s"
                )
                #expect(heard.run >= onAir - 0.3 && heard.after <= 1.2, "\(name): the DJ's set, then no more")
                // The takeover's and the hand-back's crossfades are in it, and the tail that waited (the lead).
                #expect(length >= onAir - 0.2 && length <= onAir + 1.3, "\(name): \(length) s, \(onAir) s on the air")
            }
            try ArchiveBinaryTests.checkOpus(folder + "/" + recordings[2])
            print("recording \(recordings[2]): \(try Self.seconds(folder + "/" + recordings[2])) s decoded")
            for name in Self.files(folder, ".ogg") + Self.files(folder, ".mp3") { try Self.probe(folder + "/" + name) }
        }

        /// The server killed (SIGKILL) during a show: its recording, left without its end, is ended at the next start
        /// and plays whole.
        @Test(.enabled(if: tool("oggz-validate") != nil && tool("opusinfo") != nil, "needs oggz-tools, opus-tools"))
        func aShowTheServerDiedDuringIsEndedAtTheNextStart() throws {
            let directory = temporaryPath("recordings-crash-e2e")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let flags = ["--source-password", Self.password, "--record-live", directory, "--record-live-source", "yes"]
            let folder = directory + "/test"
            let crashed = try ServedStation(flags)
            defer { crashed.stop() }
            let source = try SourceClient.ffmpeg(
                port: crashed.http, password: Self.password, mount: "/test", frequency: 660, seconds: 60, opus: true,
                name: "Crash")
            defer { source.stop() }
            #expect(waitUntil(10) { (try? crashed.station())?.recordings?.current != nil })
            usleep(2_000_000)
            crashed.server.signal(SIGKILL)
            crashed.server.process.waitUntilExit()
            source.stop()
            let name = try #require(Self.files(folder, ".opus").first)
            #expect(FileManager.default.fileExists(atPath: folder + "/.recording"), "the marker names it")
            let again = try ServedStation(flags)
            defer { again.stop() }
            #expect(
                waitUntil(10) { !FileManager.default.fileExists(atPath: folder + "/.recording") }, "\(again.server.log)"
            )
            #expect(again.server.logged("test: record_live: \(name), left open by a stop of the server, ended"))
            again.stop()
            try ArchiveBinaryTests.checkOpus(folder + "/" + name)
            print("recording \(name) after a crash: \(try Self.seconds(folder + "/" + name)) s decoded")
            try Self.probe(folder + "/" + name.replacingOccurrences(of: ".opus", with: ".ogg"))
        }
    }
}
