import Foundation
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: the binary's archive on a small tmpfs of its own (a mount namespace made by
/// `unshare`, so nothing is mounted on the machine), filled up by the test through `/proc/PID/root`: the write that
/// meets ENOSPC is logged once, the archive is `failing` and drops pages while a listener's stream goes on untouched;
/// the file it was writing is cut to whole pages and still passes oggz-validate; once the filler is removed, the
/// archive writes again and says how many pages it lost.
extension DiskTests {
    @Suite(.timeLimit(.minutes(2)))
    struct ArchiveDiskFullTests {
        /// A server archiving into `directory`, which is a 16 MiB tmpfs in a mount namespace of its own; the folder as
        /// the server sees it (through `/proc/PID/root`), and its archive's status once it has two files.
        static func serve(_ directory: String) throws -> (
            server: ServerProcess, status: UInt16, folder: String, archive: () -> ArchiveFigures?
        ) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let status = try freePort()
            let server = try ServerProcess(
                arguments: [
                    "serve", "--upstream", Fixture.path("stereo-44k-128k.mp3"), "--name", "test", "--bind",
                    "127.0.0.1", "--port", "\(try freePort())", "--status", "127.0.0.1:\(status)", "--archive",
                    directory, "--archive-span", "10",
                ],
                wrapper: [
                    try #require(tool("unshare")), "-m", "sh", "-c",
                    #"mount -t tmpfs -o size=16m tmpfs "$0" && exec "$@""#, directory,
                ])
            let folder = "/proc/\(server.process.processIdentifier)/root\(directory)/test"
            let archive = { try? statusStations(status).first?.archive }
            if !waitUntil(30, { (archive()?.files ?? 0) >= 2 }) {
                server.stop()
                Issue.record("no two archive files within 30 s: \(server.log)")
            }
            return (server, status, folder, archive)
        }

        /// It runs as root (as CI does): `unshare -m` and the tmpfs need it.
        @Test(.enabled(if: tool("unshare") != nil && tool("oggz-validate") != nil, "needs unshare and oggz-validate"))
        func aFullDiskDropsPagesNotListenersAndTheArchiveResumes() throws {
            let directory = temporaryPath("archive-full")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let (server, status, folder, archive) = try Self.serve(directory)
            defer { server.stop() }
            let listener = try Reader(port: server.port)
            defer { _ = listener.finish() }
            // Fill the volume: the next write of the archive meets ENOSPC.
            let filler = folder + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            try #require(fd >= 0)
            let block = [UInt8](repeating: 0, count: 1 << 16)
            while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            close(fd)
            #expect(waitUntil(20) { archive()?.state == "failing" }, "\(server.log)")
            let failing = try #require(archive())
            #expect(failing.writeErrors >= 1 && failing.lastError?.contains("No space left on device") == true)
            let heard = listener.count
            #expect(waitUntil(10) { (archive()?.pagesDropped ?? 0) >= 20 }, "pages are dropped from the archive")
            #expect(listener.count > heard + 20_000, "the listener's stream goes on")
            let errors = server.log.split(separator: "\n").filter { $0.contains("error: test: archive:") }
            #expect(errors.count == 1 && errors[0].contains("No space left on device"), "logged once: \(errors)")
            // Every file there plays; the one the failure cut ends at its last whole page.
            let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".opus") }
            for name in names {
                let check = try run(try #require(tool("oggz-validate")), [folder + "/" + name])
                #expect(check.status == 0, "\(name): \(check.stdout) \(check.stderr)")
            }
            // Space comes back: within the retry interval the archive writes again, and says what it lost.
            try FileManager.default.removeItem(atPath: filler)
            #expect(waitUntil(20) { archive()?.state == "writing" }, "\(server.log)")
            #expect(server.logged("test: archive: writing again, in "))
            #expect(waitUntil(10) { (archive()?.files ?? 0) > failing.files }, "a new file")
            #expect(try statusStations(status).first?.alive == true)
        }

        /// The archive's folder made read-only under the writer (a read-only bind mount over it, in the server's own
        /// mount namespace, through `nsenter`; a remount of the whole volume is refused while a file is open for
        /// writing): the file being written goes on through its open descriptor, the next one cannot be made
        /// (EROFS, logged once), pages are dropped while a listener's stream goes on; with the bind mount gone, the
        /// archive resumes in a new file.
        @Test(.enabled(if: tool("unshare") != nil && tool("nsenter") != nil, "needs unshare and nsenter"))
        func aFolderTurnedReadOnlyDropsPagesNotListeners() throws {
            let directory = temporaryPath("archive-ro")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let (server, status, _, archive) = try Self.serve(directory)
            defer { server.stop() }
            let listener = try Reader(port: server.port)
            defer { _ = listener.finish() }
            func inServer(_ script: String) throws {
                let pid = "\(server.process.processIdentifier)"
                let result = try run(
                    try #require(tool("nsenter")), ["-t", pid, "-m", "sh", "-c", script, directory + "/test"])
                try #require(result.status == 0, "\(script): \(result.stderr)")
            }
            try inServer(#"mount --bind "$0" "$0" && mount -o remount,bind,ro "$0""#)
            #expect(waitUntil(20) { archive()?.state == "failing" }, "\(server.log)")
            let failing = try #require(archive())
            #expect(failing.lastError?.contains("Read-only file system") == true, "\(failing.lastError ?? "none")")
            let heard = listener.count
            #expect(waitUntil(10) { (archive()?.pagesDropped ?? 0) >= 20 }, "pages are dropped from the archive")
            #expect(listener.count > heard + 20_000, "the listener's stream goes on")
            let errors = server.log.split(separator: "\n").filter { $0.contains("error: test: archive:") }
            #expect(errors.count == 1, "logged once: \(errors)")
            try inServer(#"umount "$0""#)
            #expect(waitUntil(20) { archive()?.state == "writing" }, "\(server.log)")
            #expect(waitUntil(10) { (archive()?.files ?? 0) > failing.files }, "a new file")
            #expect(try statusStations(status).first?.alive == true)
        }
    }
}
