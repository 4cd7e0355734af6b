import Foundation
import RadioRelaySystem
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia

extension RealTimeTests {
    /// The recorder on a folder that fails under it, as `RecordingWriterTests` drives it; in the real-time chain for
    /// the retry's wait (5 s).
    @Suite struct RecordingFailureTests {
        /// The folder gone under the recorder when a show starts (a disk that fails, or is unmounted): its recording
        /// cannot be made, pages are dropped and counted and the state is `failing`; once the folder is back, the next
        /// try (at most 5 s on) makes the show's file, which ends whole with the show.
        @Test func aFailingDiskDropsTheShowsPagesAndTheRecorderResumes() throws {
            let directory = temporaryPath("recordings-failing")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let encoder = try Encoder(EncoderConfiguration())
            let writer = try RecordingWriter(directory: directory, label: "test")
            try writer.start()
            defer { writer.stop() }
            var wall = RecordingWriterTests.eight
            func feed(_ count: Int) throws {
                for _ in 0..<count {
                    writer.offer(try encoder.encodeSilence(frames: 4800), wall: wall)
                    wall += 0.1
                }
            }
            try FileManager.default.removeItem(atPath: directory)
            writer.begin(RecordingWriterTests.show(encoder, name: "Show", at: wall, base: 0))
            try feed(20)
            #expect(waitUntil(10) { writer.status.snapshot.state == .failing })
            #expect(writer.counters.writeErrors.load(ordering: .relaxed) >= 1)
            #expect(writer.status.snapshot.lastError?.contains(directory) == true)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            #expect(
                try waitUntil(15) {
                    try feed(1)
                    return writer.status.snapshot.current != nil
                })
            #expect(writer.status.snapshot.state == .recording && writer.status.snapshot.lastError == nil)
            try feed(20)
            writer.end()
            #expect(writer.stop())
            #expect(writer.counters.dropped.load(ordering: .relaxed) >= 20, "the pages of the wait are not recorded")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            // Named by its first page's second, not by the takeover's: its first seconds are not in it.
            #expect(names.count == 1 && names.first?.hasSuffix("Z_Show.opus") == true, "\(names)")
            #expect(names.first?.hasPrefix("2026-12-05T08-00-00Z") == false, "\(names)")
            let decoded = try decodeOpus(
                [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + (names.first ?? "")))))
            #expect(decoded.pages.last?.header.isEnd == true && decoded.left.count >= 20 * 4800 - 312)
        }
    }
}
