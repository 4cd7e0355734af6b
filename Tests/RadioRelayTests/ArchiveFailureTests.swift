import Foundation
import RadioRelaySystem
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia

extension RealTimeTests {
    /// The archive writer on a folder that fails under it, as `ArchiveWriterTests` drives it; in the real-time chain
    /// for the retry's wait (5 s).
    @Suite struct ArchiveFailureTests {
        /// The folder gone under the writer (as a disk that fails, or is unmounted): the file it had ends, no new one can
        /// be made, pages are dropped and counted and the state is `failing`; once the folder is back, the next try (at
        /// most 5 s on) makes a new file and the archive writes again. Real time: the retry's wait.
        @Test func aFailingDiskDropsPagesAndTheArchiveResumes() throws {
            let directory = temporaryPath("archive-failing")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let encoder = try Encoder(EncoderConfiguration())
            let writer = try ArchiveWriterTests.writer(directory, encoder: encoder)
            try writer.start()
            defer { writer.stop() }
            var wall = Double(ArchiveWriterTests.eight) / 1000 + 0.01
            func feed(_ count: Int) throws {
                for _ in 0..<count {
                    writer.offer(try encoder.encodeSilence(frames: 4800), wall: wall)
                    wall += 0.1
                }
            }
            try feed(50)
            #expect(waitUntil(10) { writer.status.snapshot.current != nil })
            try FileManager.default.removeItem(atPath: directory)
            try feed(100)  // past 08:00:10: the file ends, and the next cannot be made
            #expect(waitUntil(10) { writer.status.snapshot.state == .failing })
            #expect(writer.counters.writeErrors.load(ordering: .relaxed) >= 1)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            #expect(
                try waitUntil(15) {
                    try feed(1)
                    return writer.status.snapshot.state == .writing
                })
            try feed(20)
            writer.stop()
            let dropped = writer.counters.pagesDropped.load(ordering: .relaxed)
            #expect(dropped >= 20, "the pages of the wait are not archived")
            let index = try #require(try ArchiveWriterTests.onDisk(directory))
            // The file that went with the folder is still listed (a restart's scan forgets it); the new one follows.
            let scanned = ArchiveWriterTests.aligned(try ArchiveWriterTests.scanned(directory), to: index)
            #expect(index.files.last == scanned.files.last && index.files.count == 2)
            let file = try #require(index.files.last)
            let decoded = try decodeOpus(
                [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file.name))))
            #expect(decoded.pages.last?.header.isEnd == true && decoded.left.count > 20 * 4800)
        }
    }
}
