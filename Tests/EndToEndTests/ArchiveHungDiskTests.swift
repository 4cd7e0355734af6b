import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// The binary's archive on a file system that stops answering: a FUSE pass-through (`bench/slowfs.py`, Debian's
/// python3-fusepy, as root) told to hang every operation. The writer's thread is held in its call; from outside it
/// the log says once that the disk has not answered for 10 s and `/status.json` shows the archive `stalled`, while a
/// listener's stream goes on untouched; when the file system answers again the log says after how long and the
/// archive writes on.
extension DiskTests {
    @Suite(.timeLimit(.minutes(2)))
    struct ArchiveHungDiskTests {
        static let slowfs = Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("bench/slowfs.py").path

        @Test(.enabled(if: tool("python3") != nil, "needs python3 (and python3-fusepy: .ci/deps --test)"))
        func aHungDiskIsToldWhileItHangsAndTheArchiveGoesOnAfter() throws {
            let base = temporaryPath("archive-hung")
            let backing = base + "/backing"
            let mount = base + "/mount"
            let control = base + "/control"
            for folder in [backing, mount] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            defer { try? FileManager.default.removeItem(atPath: base) }
            try "0 0\n".write(toFile: control, atomically: true, encoding: .utf8)
            let fuse = Process()
            fuse.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            fuse.arguments = [Self.slowfs, backing, mount, control, "--max-hang", "60"]
            let fuseLog = base + ".fuse.log"
            #expect(FileManager.default.createFile(atPath: fuseLog, contents: nil))
            defer { unlink(fuseLog) }
            fuse.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: fuseLog))
            try fuse.run()
            defer {
                try? "0 0\n".write(toFile: control, atomically: true, encoding: .utf8)
                if fuse.isRunning { kill(fuse.processIdentifier, SIGTERM) }
                if !waitUntil(5, { !Self.mounted(mount) }) { _ = try? run("/usr/bin/umount", ["-l", mount]) }
            }
            #expect(
                waitUntil(10) { Self.mounted(mount) },
                "\((try? String(contentsOfFile: fuseLog, encoding: .utf8)) ?? "")")
            let status = try freePort()
            let server = try ServerProcess(arguments: [
                "serve", "--upstream", Fixture.path("stereo-44k-128k.mp3"), "--name", "test", "--bind", "127.0.0.1",
                "--port", "\(try freePort())", "--status", "127.0.0.1:\(status)", "--archive", mount,
                "--archive-span", "10",
            ])
            defer { server.stop() }
            let archive = { try? statusStations(status).first?.archive }
            #expect(
                waitUntil(20) { (archive()?.bytesWritten ?? 0) > 0 && archive()?.state == "writing" }, "\(server.log)")
            let listener = try Reader(port: server.port)
            defer { _ = listener.finish() }
            // The disk stops answering.
            try "hang\n".write(toFile: control, atomically: true, encoding: .utf8)
            defer { try? "0 0\n".write(toFile: control, atomically: true, encoding: .utf8) }  // before the server stops
            let hung = Date()
            #expect(waitUntil(30) { archive()?.state == "stalled" }, "\(server.log)")
            let stalled = try #require(archive())
            #expect(stalled.stalledSeconds >= 10, "\(stalled)")
            let heard = listener.count
            #expect(waitUntil(20) { server.log.contains("test: archive: the disk has not answered for 10.0 s") })
            #expect(waitUntil(10) { listener.count > heard + 20_000 }, "the listener's stream goes on")
            let told = server.log.split(separator: "\n").filter { $0.contains("the disk has not answered") }
            #expect(told.count == 1, "told once: \(told)")
            // It answers again: the log says after how long; the archive writes on.
            try "0 0\n".write(toFile: control, atomically: true, encoding: .utf8)
            let held = Date().timeIntervalSince(hung)
            #expect(waitUntil(20) { server.log.contains("test: archive: the disk answered again after ") })
            #expect(
                waitUntil(20) { archive()?.state == "writing" && (archive()?.bytesWritten ?? 0) > stalled.bytesWritten }
            )
            let answered = try #require(server.log.split(separator: "\n").first { $0.contains("answered again after") })
            print("hung disk: held \(held) s; \(told[0]); \(answered)")
            #expect(try statusStations(status).first?.alive == true)
        }

        /// Whether a file system is mounted at `path` (`/proc/self/mounts`).
        static func mounted(_ path: String) -> Bool {
            let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
            return mounts.split(separator: "\n").contains {
                $0.split(separator: " ").dropFirst().first == Substring(path)
            }
        }
    }
}
