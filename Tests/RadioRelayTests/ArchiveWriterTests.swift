import Foundation
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia

/// The archive writer on a real folder, its pages stamped with chosen wall times (no waiting on the clock): files
/// start at the first page after each boundary and each one decodes alone to the audio it holds; the index on disk is
/// what a scan of the files rebuilds; a restart after a crash (index gone, a file torn) rebuilds it, cuts the torn
/// page and ends the file; a full queue drops pages, counts them and leaves a gap between two files.
@Suite(.timeLimit(.minutes(1))) struct ArchiveWriterTests {
    static let eight = ArchiveRulesTests.eight

    /// A writer for a new folder, with `span`, its headers queued from `encoder`.
    static func writer(_ directory: String, span: Int = 10, encoder: Encoder) throws -> ArchiveWriter {
        var settings = ArchiveSettings()
        settings.span = span
        let writer = try ArchiveWriter(directory: directory, format: .opus, settings: settings, label: "test")
        writer.offer(headers: encoder.headerPages.map(\.bytes))
        return writer
    }

    /// `count` pages of 100 ms, the first published at `start` (Unix seconds).
    static func feed(_ writer: ArchiveWriter, _ encoder: Encoder, count: Int, start: Double) throws {
        for index in 0..<count {
            writer.offer(try encoder.encodeSilence(frames: 4800), wall: start + Double(index) / 10)
        }
    }

    static func files(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".opus") }.sorted()
    }

    /// The index a scan of every file in `directory` builds.
    static func scanned(_ directory: String) throws -> ArchiveIndex {
        ArchiveIndex(
            files: try files(directory).map { name in
                let start = try #require(ArchiveName.parse(name)).start
                return ArchiveDisk.scan(directory + "/" + name, name: name, start: start, format: .opus).file
            })
    }

    /// A scan's index with each file's times moved to the start `index` has for it: a scan knows the second a
    /// file's name says, the writer the millisecond its first page was published.
    static func aligned(_ scanned: ArchiveIndex, to index: ArchiveIndex) -> ArchiveIndex {
        ArchiveIndex(
            files: scanned.files.map { file in
                guard let known = index.file(named: file.name) else { return file }
                let shift = known.start - file.start
                var moved = file
                moved.start += shift
                moved.end += shift
                moved.points = file.points.map { ArchiveIndex.Point(time: $0.time + shift, offset: $0.offset) }
                return moved
            })
    }

    static func onDisk(_ directory: String) throws -> ArchiveIndex? {
        ArchiveIndex(text: try String(contentsOfFile: directory + "/index.txt", encoding: .utf8))
    }

    @Test func filesStartAtTheBoundariesAndEachPlaysAlone() throws {
        let directory = temporaryPath("archive-writer")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let encoder = try Encoder(EncoderConfiguration())
        let writer = try Self.writer(directory, encoder: encoder)
        try writer.start()
        // 25 s from 07:59:56.95: a file to 08:00:00, two of 10 s, one of 1.9 s.
        try Self.feed(writer, encoder, count: 250, start: Double(Self.eight) / 1000 - 3.05)
        #expect(writer.stop())
        let names = try Self.files(directory)
        #expect(
            names == [
                "2026-12-05T07-59-56Z.opus", "2026-12-05T08-00-00Z.opus", "2026-12-05T08-00-10Z.opus",
                "2026-12-05T08-00-20Z.opus",
            ])
        var pagesSeen = 0
        for (name, pages) in zip(names, [31, 100, 100, 19]) {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
            let decoded = try decodeOpus(bytes)  // every page's CRC, one serial, granules only going on
            #expect(decoded.pages.count == pages + 2, "\(name): its headers and its pages")
            #expect(decoded.pages.map(\.header.sequence) == (0..<UInt32(pages + 2)).map { $0 })
            #expect(decoded.pages[2].header.granulePosition == 4800, "\(name): granules from 0")
            #expect(
                decoded.pages.last?.header.isEnd == true && decoded.pages.dropLast().allSatisfy { !$0.header.isEnd })
            #expect(decoded.left.count == pages * 4800 - 312, "\(name): all of it, less the pre-skip")
            pagesSeen += pages
        }
        #expect(pagesSeen == 250, "no page lost or repeated")
        let text = try String(contentsOfFile: directory + "/index.txt", encoding: .utf8)
        let index = try #require(try Self.onDisk(directory), "\(text)")
        #expect(index == Self.aligned(try Self.scanned(directory), to: index), "the index is what a scan rebuilds")
        // A file's start is its first page's, to the millisecond (published 50 ms after the boundary).
        #expect(index.files[1].points.map(\.time) == [Self.eight + 50], "a point every 10 s")
        let status = writer.status.snapshot
        #expect(status.files == 4 && status.state == .stopped && status.oldest == index.files.first?.start)
        #expect(writer.counters.bytesWritten.load(ordering: .relaxed) == Int(index.bytes))
        #expect(writer.counters.pagesDropped.load(ordering: .relaxed) == 0)
    }

    @Test func aRestartRebuildsTheIndexCutsATornPageAndEndsTheFile() throws {
        let directory = temporaryPath("archive-restart")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let encoder = try Encoder(EncoderConfiguration())
        let first = try Self.writer(directory, encoder: encoder)
        try first.start()
        try Self.feed(first, encoder, count: 150, start: Double(Self.eight) / 1000 + 0.01)
        #expect(first.stop())
        let names = try Self.files(directory)
        #expect(names.count == 2)
        // A crash: the index lost, the last file cut in the middle of a page, its end-of-stream page gone.
        try FileManager.default.removeItem(atPath: directory + "/index.txt")
        let last = directory + "/" + names[1]
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: last)))
        let lastPage = ArchiveDisk.scan(last, name: names[1], start: 0, format: .opus).lastUnitOffset
        try Data(whole[0..<Int(lastPage) + 30]).write(to: URL(fileURLWithPath: last))
        // A reader's view of the folder: rebuilt from the files, the torn page left out, nothing changed on disk.
        let read = ArchiveFolder.index(directory, format: .opus)
        #expect(read.files.map(\.name) == names && read.files.last?.size == lastPage)
        #expect(!FileManager.default.fileExists(atPath: directory + "/index.txt"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: last)).count == Int(lastPage) + 30)
        let second = try Self.writer(directory, encoder: encoder)
        try second.start()
        #expect(second.stop())
        let index = try #require(try Self.onDisk(directory))
        #expect(index == (try Self.scanned(directory)) && index.files.map(\.name) == names && index == read)
        let cut = [UInt8](try Data(contentsOf: URL(fileURLWithPath: last)))
        #expect(cut.count == Int(lastPage), "the torn page is cut off")
        let decoded = try decodeOpus(cut)
        #expect(decoded.pages.last?.header.isEnd == true, "the page before it now ends the stream")
        #expect(decoded.left.count == 49 * 4800 - 312)
    }

    @Test func aFullQueueDropsPagesCountsThemAndLeavesAGap() throws {
        let directory = temporaryPath("archive-queue")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let encoder = try Encoder(EncoderConfiguration())
        let writer = try Self.writer(directory, span: 3600, encoder: encoder)
        // The writer does not take anything yet (a disk that hangs): the queue fills, then pages are dropped.
        let start = Double(Self.eight) / 1000 + 0.01
        try Self.feed(writer, encoder, count: 5000, start: start)
        #expect(writer.counters.pagesDropped.load(ordering: .relaxed) == 5000 - (ArchiveWriter.maxItems - 1))
        try writer.start()
        #expect(waitUntil(20) { writer.queued == 0 })
        try Self.feed(writer, encoder, count: 100, start: start + 500)
        #expect(writer.stop())
        let index = try #require(try Self.onDisk(directory))
        #expect(index.files.map(\.name) == ["2026-12-05T08-00-00Z.opus", "2026-12-05T08-08-20Z.opus"])
        #expect(index.gaps.count == 1, "the dropped pages are a gap between two files")
        let gap = try #require(index.gaps.first)
        // The new file starts at the second page after the gap (the first gives the granule the next ones count on
        // from), published at 500.11 s.
        #expect(
            gap.lowerBound == Self.eight + 409_510 && gap.upperBound == Self.eight + 500_110,
            "\(gap.lowerBound - Self.eight) \(gap.upperBound - Self.eight)")
        #expect(index.locate(Self.eight + 450_000)?.skippedGap == true)
    }

    /// A station `name` on a fixture, any free port, archived in `directory`.
    static func station(_ name: String, archive directory: String) -> StationConfiguration {
        var configuration = StationConfiguration()
        configuration.name = name
        configuration.upstream = Fixture.path("stereo-44k-128k.mp3")
        configuration.broadcaster.bind = "127.0.0.1"
        configuration.broadcaster.port = 0
        configuration.archive.directory = directory
        return configuration
    }

    /// A folder that cannot be made refuses the station, with a message that names it and says what to do.
    @Test func aDirectoryThatCannotBeWrittenRefusesTheStation() throws {
        let configuration = Self.station("refused", archive: "/proc/radio-relay-archive")
        let error = #expect(throws: ConfigurationError.self) { try Station(configuration) }
        #expect(error?.message.contains("the directory /proc/radio-relay-archive/refused cannot be written") == true)
        #expect(error?.message.contains("make it writable for the server's user, or change archive") == true)
    }

    /// A reload that changes `archive_keep` updates the running station's writers in place (the main output's and
    /// the MP3 output's); one that changes `archive` or `archive_span` restarts it.
    @Test func aReloadAppliesKeepInPlace() throws {
        let directory = temporaryPath("archive-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Self.station("kept", archive: directory)
        configuration.mp3 = true
        let station = try Station(configuration)
        #expect(station.archives.map(\.directory) == [directory + "/kept", directory + "/kept/mp3"])
        var new = configuration
        new.archive.keep = ArchiveKeep(seconds: 3_600, bytes: 1 << 30)
        #expect(station.canUpdate(to: new))
        try station.update(new)
        #expect(station.archives.allSatisfy { $0.keep.snapshot == new.archive.keep })
        new.archive.span = 3_600
        #expect(!station.canUpdate(to: new))
    }

    /// A new Ogg link (a chained title, `chain_titles`) starts a new file with the link's own headers: each file is
    /// one whole stream, the first one ended where its link ended.
    @Test func aNewLinkStartsANewFile() throws {
        let directory = temporaryPath("archive-link")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let encoder = try Encoder(EncoderConfiguration())
        let writer = try Self.writer(directory, span: 600, encoder: encoder)
        try writer.start()
        let start = Double(Self.eight) / 1000 + 0.01
        try Self.feed(writer, encoder, count: 30, start: start)
        try encoder.startLink(title: "Second song")
        try Self.feed(writer, encoder, count: 30, start: start + 3)
        #expect(writer.stop())
        let names = try Self.files(directory)
        #expect(names == ["2026-12-05T08-00-00Z.opus", "2026-12-05T08-00-03Z.opus"])
        var samples = 0
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
            let decoded = try decodeOpus(bytes)
            #expect(decoded.pages.first?.header.isBeginning == true && decoded.pages.last?.header.isEnd == true)
            #expect(Set(decoded.pages.map(\.header.serial)).count == 1, "\(name): one stream")
            samples += decoded.left.count
        }
        let tags = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + names[1]))
        #expect(String(decoding: tags.prefix(400), as: UTF8.self).contains("TITLE=Second song"))
        #expect(samples > 5 * 48_000, "both links' audio")
    }
}
