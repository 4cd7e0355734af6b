import Foundation
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia

/// The recorder on a real folder, its pages stamped with chosen wall times (no waiting on the clock): a show's
/// pages make a file named by its takeover and its show, a stream of its own that decodes whole; a show longer than
/// `record_live_max` goes on in a new file named by the second its first page came; the source's bytes before and
/// during the show are copied untouched beside it; pages outside a show are not recorded; a second show makes a
/// second file.
@Suite(.timeLimit(.minutes(1))) struct RecordingWriterTests {
    static let eight = Double(ArchiveRulesTests.eight) / 1000

    static func show(_ encoder: Encoder, name: String, at wall: Double, base: Int64, max: Int = 14_400)
        -> RecordingShow
    {
        RecordingShow(
            name: name, wall: wall, base: base, headers: encoder.headerPages.map(\.bytes), maxSeconds: max)
    }

    /// `count` pages of 100 ms, the first published at `start`.
    static func feed(_ writer: RecordingWriter, _ encoder: Encoder, count: Int, start: Double) throws {
        for index in 0..<count {
            writer.offer(try encoder.encodeSilence(frames: 4800), wall: start + Double(index) / 10)
        }
    }

    static func check(_ path: String, pages: Int) throws {
        let decoded = try decodeOpus([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(decoded.pages.count == pages + 2, "\(path): its headers and its pages")
        #expect(decoded.pages.map(\.header.sequence) == (0..<UInt32(pages + 2)).map { $0 })
        #expect(decoded.pages[2].header.granulePosition == 4800, "\(path): granules from 0")
        #expect(decoded.pages.last?.header.isEnd == true && decoded.pages.dropLast().allSatisfy { !$0.header.isEnd })
        #expect(decoded.left.count == pages * 4800 - 312, "\(path): all of it, less the pre-skip")
    }

    @Test func aShowIsAFileOfItsOwnSplitAtTheMaximumWithTheSourceBesideIt() throws {
        let directory = temporaryPath("recordings")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let encoder = try Encoder(EncoderConfiguration())
        let writer = try RecordingWriter(directory: directory, label: "test")
        try writer.start()
        try Self.feed(writer, encoder, count: 20, start: Self.eight - 2)  // before the show: not recorded
        let sourceBytes = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        writer.offer(source: Array("OggS".utf8) + sourceBytes[..<1000])  // before the takeover
        writer.begin(Self.show(encoder, name: "Morning-Show", at: Self.eight, base: 20 * 4800, max: 60))
        writer.offer(source: Array(sourceBytes[1000...]))
        // 70 s: 60 s in the first file, 10 s in the second, which starts at 08:01:00.
        try Self.feed(writer, encoder, count: 700, start: Self.eight + 0.05)
        writer.end()
        try Self.feed(writer, encoder, count: 30, start: Self.eight + 70.05)  // after the show: not recorded
        writer.sourceEnded()
        writer.begin(Self.show(encoder, name: "live", at: Self.eight + 73.4, base: 750 * 4800))
        try Self.feed(writer, encoder, count: 40, start: Self.eight + 73.45)
        #expect(writer.stop(), "a stop during a show finishes its file")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(
            names == [
                "2026-12-05T08-00-00Z_Morning-Show.ogg", "2026-12-05T08-00-00Z_Morning-Show.opus",
                "2026-12-05T08-01-00Z_Morning-Show.opus", "2026-12-05T08-01-13Z_live.opus",
            ])
        try Self.check(directory + "/2026-12-05T08-00-00Z_Morning-Show.opus", pages: 600)
        try Self.check(directory + "/2026-12-05T08-01-00Z_Morning-Show.opus", pages: 100)
        try Self.check(directory + "/2026-12-05T08-01-13Z_live.opus", pages: 40)
        let copy = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + names[0])))
        #expect(copy == Array("OggS".utf8) + sourceBytes, "the source's bytes, untouched")
        let status = writer.status.snapshot
        #expect(status.state == .stopped && status.current == nil && status.last == "2026-12-05T08-01-13Z_live.opus")
        #expect(writer.counters.files.load(ordering: .relaxed) == 3)
        #expect(writer.counters.sourceFiles.load(ordering: .relaxed) == 1)
        #expect(writer.counters.dropped.load(ordering: .relaxed) == 0)
        #expect(writer.counters.writeErrors.load(ordering: .relaxed) == 0)
    }

    @Test func aFullQueueDropsPagesCountsThemAndTheShowGoesOnInANewFile() throws {
        let directory = temporaryPath("recordings-full")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let encoder = try Encoder(EncoderConfiguration())
        let writer = try RecordingWriter(directory: directory, label: "test")
        writer.begin(Self.show(encoder, name: "Show", at: Self.eight, base: 0))
        // The thread not started: the queue fills, and what comes beyond it is dropped.
        try Self.feed(writer, encoder, count: RecordingWriter.maxItems + 9, start: Self.eight + 0.05)
        #expect(writer.counters.dropped.load(ordering: .relaxed) == 10)
        try writer.start()
        #expect(waitUntil(20) { writer.queue.count == 0 })
        try Self.feed(writer, encoder, count: 50, start: Self.eight + 600)
        #expect(writer.stop())
        #expect(writer.counters.dropped.load(ordering: .relaxed) == 10)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names == ["2026-12-05T08-00-00Z_Show.opus", "2026-12-05T08-10-00Z_Show.opus"], "\(names)")
        try Self.check(directory + "/" + names[0], pages: RecordingWriter.maxItems - 1)
        // After the gap the granule is unknown until a page gives it: the new file starts at the page after it.
        try Self.check(directory + "/" + names[1], pages: 49)
    }

    /// A station with `record_live` has its recorder in `DIR/NAME`; a folder that cannot be made refuses the station
    /// with a message that names it; a reload applies `record_live_source` and `record_live_max` in place, and a
    /// change of `record_live` restarts the station.
    @Test func aStationGetsItsRecorderAndAReloadAppliesItsSettings() throws {
        let directory = temporaryPath("recordings-station")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ArchiveWriterTests.station("shows", archive: directory)
        configuration.archive.directory = nil
        configuration.recording.directory = directory
        let station = try Station(configuration)
        #expect(station.recorder?.directory == directory + "/shows" && station.archives.isEmpty)
        var new = configuration
        new.recording.keepsSource = true
        new.recording.maxSeconds = 600
        #expect(station.canUpdate(to: new))
        try station.update(new)
        new.recording.directory = directory + "/other"
        #expect(!station.canUpdate(to: new))
        configuration.name = "refused"
        configuration.recording.directory = "/proc/radio-relay-shows"
        let error = #expect(throws: ConfigurationError.self) { try Station(configuration) }
        #expect(error?.message.contains("record_live: the directory /proc/radio-relay-shows/refused cannot") == true)
    }

    /// A recording a crash left open (the marker names it; its last page not flagged, a torn page after it) is ended
    /// at the next start: the torn bytes cut off, its last page flagged end-of-stream.
    @Test func aRecordingACrashLeftOpenIsEndedAtTheNextStart() throws {
        let directory = temporaryPath("recordings-crash")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let encoder = try Encoder(EncoderConfiguration())
        var bytes = encoder.headerPages.flatMap(\.bytes)
        for _ in 0..<30 { bytes += try encoder.encodeSilence(frames: 4800).flatMap(\.bytes) }
        let whole = bytes.count
        bytes += Array(bytes[200..<260])  // a torn page
        let name = "2026-12-05T08-00-00Z_Show.opus"
        let writer = try RecordingWriter(directory: directory, label: "test")
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
        try Data(name.utf8).write(to: URL(fileURLWithPath: directory + "/.recording"))
        try writer.start()
        #expect(writer.stop())
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names == [name], "the marker is gone")
        let ended = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
        #expect(ended.count == whole)
        let decoded = try decodeOpus(ended)
        #expect(decoded.pages.last?.header.isEnd == true && decoded.pages.dropLast().allSatisfy { !$0.header.isEnd })
        #expect(decoded.left.count == 30 * 4800 - 312)
    }
}
