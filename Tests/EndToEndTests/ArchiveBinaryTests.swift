import Foundation
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: the binary with `archive` and a span of 10 s, its files checked by the tools
/// players trust (oggz-validate, opusinfo, ffmpeg, ffprobe), `archive_keep` removing the oldest files, and a SIGKILL
/// in the middle of a file: every finished file plays, and after a restart the index is brought up to date, the
/// file the kill cut plays too, and the archive goes on.
extension DiskTests {
    @Suite(.timeLimit(.minutes(2)))
    struct ArchiveBinaryTests {

        /// `serve` with an archive in `directory` (station `test`), its status on `status`.
        static func serve(_ directory: String, status: UInt16, keep: String) throws -> ServerProcess {
            try ServerProcess(arguments: [
                "serve", "--upstream", Fixture.path("stereo-44k-128k.mp3"), "--name", "test", "--bind", "127.0.0.1",
                "--port", "\(try freePort())", "--status", "127.0.0.1:\(status)", "--mp3", "yes", "--archive",
                directory, "--archive-span", "10", "--archive-keep", keep,
            ])
        }

        /// The index on disk (finished files only).
        static func index(_ folder: String) -> ArchiveIndex? {
            (try? String(contentsOfFile: folder + "/index.txt", encoding: .utf8)).flatMap { ArchiveIndex(text: $0) }
        }

        /// An Ogg Opus file passes oggz-validate and opusinfo with no warning, and ffmpeg decodes all of it: the
        /// samples its last granule promises, less the pre-skip (at least `minimum`).
        static func checkOpus(_ path: String, minimum: Int = 48_000) throws {
            let validate = try run(try #require(tool("oggz-validate")), [path])
            #expect(validate.status == 0, "oggz-validate \(path): \(validate.stdout) \(validate.stderr)")
            let info = try run(try #require(tool("opusinfo")), [path])
            let said = (info.stdout + info.stderr).lowercased()
            #expect(info.status == 0 && !said.contains("warning") && !said.contains("error"), "opusinfo: \(said)")
            let decoded = try decodeOpus([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            let raw = temporaryPath("archive.raw")
            defer { try? FileManager.default.removeItem(atPath: raw) }
            let ffmpeg = try run(
                try #require(tool("ffmpeg")),
                ["-v", "error", "-i", path, "-f", "s16le", "-ac", "2", "-ar", "48000", "-y", raw])
            #expect(ffmpeg.status == 0 && ffmpeg.stderr.isEmpty, "ffmpeg \(path): \(ffmpeg.stderr)")
            let samples = (try FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int ?? 0) / 4
            #expect(decoded.left.count >= minimum, "\(path): \(decoded.left.count) samples")
            #expect(samples == decoded.left.count, "\(path): ffmpeg decodes \(samples) of \(decoded.left.count)")
        }

        /// An MP3 file: ffprobe and ffmpeg read it without an error.
        static func checkMP3(_ path: String) throws {
            let probe = try run(try #require(tool("ffprobe")), ["-v", "error", path])
            #expect(probe.status == 0 && probe.stderr.isEmpty, "ffprobe \(path): \(probe.stderr)")
            let decode = try run(try #require(tool("ffmpeg")), ["-v", "error", "-i", path, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg \(path): \(decode.stderr)")
        }

        @Test(.enabled(if: tool("oggz-validate") != nil && tool("opusinfo") != nil, "needs oggz-tools, opus-tools"))
        func filesOfASpanPlayAloneAndKeepRemovesTheOldest() throws {
            let directory = temporaryPath("archive-e2e")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let status = try freePort()
            let server = try Self.serve(directory, status: status, keep: "25s")
            defer { server.stop() }
            let folder = directory + "/test"
            // Files go when all of their audio is older than 25 s: about 40 s in, the first one has gone.
            var first: String?
            #expect(
                waitUntil(90) {
                    let index = Self.index(folder)
                    if first == nil { first = index?.files.first?.name }
                    guard let first, let index, index.files.count >= 2 else { return false }
                    return index.file(named: first) == nil
                }, "\(server.log)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/" + (first ?? "")), "the oldest file is gone")
            let station = try #require(try statusStations(status).first)
            let archive = try #require(station.archive)
            #expect(archive.state == "writing" && archive.filesRemoved >= 1 && archive.pagesDropped == 0)
            #expect(archive.directory == folder && archive.writeErrors == 0)
            #expect(station.archiveMP3?.state == "writing")
            let metrics = try httpGet(status, "/metrics").text
            #expect(metrics.contains("radio_relay_archive_writing{station=\"test\",format=\"opus\"} 1"))
            #expect(metrics.contains("radio_relay_archive_files{station=\"test\",format=\"mp3\"}"))
            // Stopped, so that archive_keep no longer removes what is being checked; the stop ends the file it wrote.
            server.stop()
            let index = try #require(Self.index(folder))
            let onDisk = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".opus") }
            #expect(Set(onDisk) == Set(index.files.map(\.name)))
            for file in index.files.dropFirst().dropLast() {
                #expect(file.end - file.start >= 9_000 && file.end - file.start <= 10_500, "\(file.name): a span")
                #expect(file.name.hasSuffix("0Z.opus"), "\(file.name): on a boundary of the UTC clock")
            }
            for file in index.files.dropLast() { try Self.checkOpus(folder + "/" + file.name) }
            if let last = index.files.last { try Self.checkOpus(folder + "/" + last.name, minimum: 1) }
            let mp3 = try #require(Self.index(folder + "/mp3"))
            #expect(mp3.files.count >= 2)
            for file in mp3.files { try Self.checkMP3(folder + "/mp3/" + file.name) }
        }

        @Test(.enabled(if: tool("oggz-validate") != nil && tool("opusinfo") != nil, "needs oggz-tools, opus-tools"))
        func aKillMidFileLosesNoFinishedFileAndTheArchiveGoesOn() throws {
            let directory = temporaryPath("archive-kill")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let folder = directory + "/test"
            let status = try freePort()
            let server = try Self.serve(directory, status: status, keep: "none")
            #expect(waitUntil(60) { (Self.index(folder)?.files.count ?? 0) >= 2 }, "\(server.log)")
            // Into the next file (on disk, not in the index yet), then killed where it stands.
            func writing() -> String? {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                let listed = Set(Self.index(folder)?.files.map(\.name) ?? [])
                return names.filter { $0.hasSuffix(".opus") && !listed.contains($0) }.max()
            }
            func size(_ name: String) -> Int {
                ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + name))?[.size] as? Int) ?? 0
            }
            #expect(waitUntil(15) { writing().map { size($0) > 50_000 } ?? false }, "a few seconds into it")
            let current = try #require(writing())
            server.signal(SIGKILL)
            server.stop()
            let finished = try #require(Self.index(folder)).files
            #expect(finished.allSatisfy { $0.name != current })
            for file in finished { try Self.checkOpus(folder + "/" + file.name) }
            // The restart: the index brought up to date (the cut file scanned and ended), a new file goes on.
            let again = try Self.serve(directory, status: status, keep: "none")
            defer { again.stop() }
            #expect(waitUntil(30) { (Self.index(folder)?.files.count ?? 0) >= finished.count + 2 }, "\(again.log)")
            #expect(
                again.log.contains("test: archive: index brought up to date: 1 of \(finished.count + 1) files scanned"))
            let index = try #require(Self.index(folder))
            #expect(index.files.prefix(finished.count + 1).map(\.name) == finished.map(\.name) + [current])
            try Self.checkOpus(folder + "/" + current)
            let killed = try #require(index.file(named: current))
            #expect(index.gaps.count <= 1 && index.gaps.allSatisfy { $0.lowerBound == killed.end }, "only the restart")
            try Self.checkOpus(folder + "/" + index.files[finished.count + 1].name)
            #expect(try statusStations(status).first?.archive?.state == "writing")
        }
    }
}
