import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport
import Testing

@testable import RadioRelayMedia

/// A time-shifted listener's reading of an archive, on files made in memory as the writer makes them: it starts at
/// the page that holds the moment asked for, goes on into the next file as one Ogg stream (one serial, page
/// sequence and granules without a gap, no end-of-stream flag until the end), and decodes to exactly the audio from
/// that page to the end of the second file. `TimeShiftStart` reads the query's `start` and `offset`.
@Suite struct ArchivePlayheadTests {
    static let eight = ArchiveRulesTests.eight

    /// A file of `pages` pages of 100 ms (of silence, or what `audio` encodes for each), as `ArchiveOggFile` writes
    /// it, and its index entry.
    static func file(
        start: Int64, pages: Int, encoder: Encoder, base: inout Int64,
        audio: (Encoder) throws -> [OggPage] = { try $0.encodeSilence(frames: 4800) }
    ) throws -> ([UInt8], ArchiveIndex.File) {
        var ogg = try #require(ArchiveOggFile(headers: encoder.headerPages.map(\.bytes), base: base))
        var bytes = ogg.headerBytes
        for _ in 0..<pages {
            for page in try audio(encoder) {
                bytes += ogg.carry(page.bytes)
                base = page.granulePosition
            }
        }
        bytes += ogg.finish()
        let name = ArchiveName.name(start: start, format: .opus)
        var scanner = ArchiveScanner(name: name, start: start, format: .opus)
        scanner.feed(bytes)
        return (bytes, scanner.file)
    }

    /// Reads from `target` to the end of what `files` hold, in chunks of `chunk` bytes.
    static func read(_ files: [String: [UInt8]], index: ArchiveIndex, target: Int64, chunk: Int) throws -> (
        bytes: [UInt8], seconds: Double
    ) {
        let location = try #require(index.locate(target))
        let start = try #require(index.file(named: location.file)).start
        var playhead = ArchivePlayhead(location: location, fileStart: start, target: target, format: .opus)
        var out: [UInt8] = []
        for _ in 0..<100_000 {
            switch playhead.next() {
            case .bytes(let bytes, _): out += bytes
            case .needsBytes:
                let bytes = try #require(files[playhead.file])
                let from = Int(playhead.readOffset)
                guard from < bytes.count else { return (out, playhead.seconds) }
                playhead.feed(bytes[from..<min(bytes.count, from + chunk)])
            case .endOfFile:
                guard let next = index.file(after: playhead.fileStart) else { return (out, playhead.seconds) }
                playhead.enter(file: next.name, start: next.start)
            case .damaged:
                Issue.record("damaged at \(playhead.file) \(playhead.readOffset)")
                return (out, playhead.seconds)
            }
        }
        Issue.record("did not end")
        return (out, playhead.seconds)
    }

    @Test(arguments: [333, 65_536]) func aListenerStartsAtItsPageAndCrossesIntoTheNextFile(chunk: Int) throws {
        let encoder = try Encoder(EncoderConfiguration())
        var base: Int64 = 0
        let (first, firstEntry) = try Self.file(start: Self.eight, pages: 100, encoder: encoder, base: &base)
        let (second, secondEntry) = try Self.file(start: Self.eight + 10_000, pages: 100, encoder: encoder, base: &base)
        let index = ArchiveIndex(files: [firstEntry, secondEntry])
        let files = [firstEntry.name: first, secondEntry.name: second]
        // 4.25 s into the first file: the page of 4.2–4.3 s is the first one sent.
        let (out, seconds) = try Self.read(files, index: index, target: Self.eight + 4_250, chunk: chunk)
        #expect(abs(seconds - 15.8) < 1e-9, "\(seconds) s")
        var offset = 0
        var serials: Set<UInt32> = []
        var sequence: UInt32 = 0
        var granule: Int64 = 0
        var ends = 0
        while offset < out.count {
            let header = try #require(OggPageHeader.decode(out, at: offset))
            let unit = ArchiveUnit.find(in: out, at: offset, format: .opus)
            #expect(unit.length > 0, "a whole page with its CRC at \(offset)")
            serials.insert(header.serial)
            #expect(header.sequence == sequence, "page sequence \(header.sequence) after \(sequence)")
            sequence = header.sequence &+ 1
            #expect(header.granulePosition >= granule)
            granule = max(granule, header.granulePosition)
            if header.isEnd { ends += 1 }
            offset += max(1, unit.length)
        }
        #expect(serials.count == 1 && ends == 0)
        #expect(granule == 158 * 4800, "granules from 0: \(granule)")
        let decoded = try decodeOpus(out)
        #expect(decoded.left.count == 158 * 4800 - 312, "\(decoded.left.count) samples")
    }

    /// A moment in the first page after one of the index's points (one every 10 s): the reader goes to the point and
    /// skips nothing, and the page it starts with counts its own 100 ms, not its place in the file (a bench found
    /// listeners that waited 8 to 38 s after their burst, their granules starting at 10.1 s and more).
    @Test(arguments: [10_000, 10_030, 20_099]) func aMomentRightAfterAPointCountsOnlyItsPage(after: Int64) throws {
        let encoder = try Encoder(EncoderConfiguration())
        var base: Int64 = 0
        let (bytes, entry) = try Self.file(start: Self.eight, pages: 250, encoder: encoder, base: &base)
        let index = ArchiveIndex(files: [entry])
        #expect(entry.points.count == 3, "points at 0, 10 and 20 s")
        let (out, seconds) = try Self.read([entry.name: bytes], index: index, target: Self.eight + after, chunk: 4096)
        let pageStart = after / 100 * 100
        #expect(abs(seconds - Double(25_000 - pageStart) / 1000) < 1e-9, "\(seconds) s")
        var offset = 0
        var firstAudio: Int64?
        while offset < out.count, let header = OggPageHeader.decode(out, at: offset) {
            if header.granulePosition > 0 && firstAudio == nil { firstAudio = header.granulePosition }
            offset += max(1, ArchiveUnit.find(in: out, at: offset, format: .opus).length)
        }
        #expect(firstAudio == 4800, "its first page's granule: \(String(describing: firstAudio))")
        #expect(try decodeOpus(out).left.count == Int(25_000 - pageStart) * 48 - 312)
    }

    @Test func aMomentInAGapStartsAtTheNextFile() throws {
        let encoder = try Encoder(EncoderConfiguration())
        var base: Int64 = 0
        let (first, firstEntry) = try Self.file(start: Self.eight, pages: 50, encoder: encoder, base: &base)
        let (second, secondEntry) = try Self.file(start: Self.eight + 20_000, pages: 30, encoder: encoder, base: &base)
        let index = ArchiveIndex(files: [firstEntry, secondEntry])
        let (out, seconds) = try Self.read(
            [firstEntry.name: first, secondEntry.name: second], index: index, target: Self.eight + 12_000, chunk: 4096)
        #expect(abs(seconds - 3.0) < 1e-9)
        #expect(try decodeOpus(out).left.count == 30 * 4800 - 312)
        // From the first file's start: both files, the gap left out.
        let whole = try Self.read(
            [firstEntry.name: first, secondEntry.name: second], index: index, target: Self.eight, chunk: 4096)
        #expect(abs(whole.seconds - 8.0) < 1e-9)
    }

    @Test func theQueryIsReadStrictly() throws {
        func parse(q query: String?) -> Result<TimeShiftStart, TimeShiftStartError>? {
            TimeShiftStart.parse(SourceRules.parameters(query))
        }
        #expect(parse(q: nil) == nil)
        #expect(parse(q: "token=x") == nil)
        #expect(parse(q: "offset=2400") == .success(.behind(seconds: 2400)))
        #expect(parse(q: "start=2026-12-05T08:00:00Z") == .success(.at(1_796_457_600_000)))
        #expect(parse(q: "start=2026-12-05T08%3A00%3A00.250Z") == .success(.at(1_796_457_600_250)))
        #expect(parse(q: "start=2026-12-05T08:00:00%2B00:00") == .success(.at(1_796_457_600_000)))
        for bad in [
            "offset=-1", "offset=1e3", "offset=", "offset=99999999999", "offset=315576001", "start=2026-12-05",
            "start=2026-12-05T08:00:00", "start=2026-02-30T08:00:00Z", "start=2026-12-05T25:00:00Z",
            "start=2026-12-05T08:00:00.Z", "start=2026-12-05T08:00:00.1234Z", "start=x&offset=1", "offset=1&start=x",
            "start=%00%00", "start=2026-12-05T08:00:00+01:00",
        ] {
            guard case .failure? = parse(q: bad) else {
                Issue.record("\(bad) was taken")
                continue
            }
        }
        #expect(TimeShiftStart.behind(seconds: 600).target(now: 1_796_544_000.5) == 1_796_543_400_500)
        #expect(TimeShiftStart.at(5).target(now: 1e9) == 5)
    }
}
