import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelayMedia

/// The archive's index as a value: where a reader starts for a time (a point in the file that covers it, the next
/// file across a gap, nothing outside), its text on disk read back and refused when damaged, and the scanner that
/// builds a file's entry from its bytes in any chunking (a torn end left out, MP3 frames timed).
@Suite struct ArchiveIndexTests {
    static let eight = ArchiveRulesTests.eight

    static func file(_ start: Int64, _ end: Int64, points: [(Int64, Int64)] = []) -> ArchiveIndex.File {
        ArchiveIndex.File(
            name: ArchiveName.name(start: start, format: .opus), start: start, end: end, size: 100_000,
            points: [ArchiveIndex.Point(time: start, offset: 0)]
                + points.map { ArchiveIndex.Point(time: $0.0, offset: $0.1) })
    }

    /// 08:00–08:10 with points every 10 s, then a gap to 08:12, then 08:12–08:20.
    static let index = ArchiveIndex(files: [
        file(eight + 720_000, eight + 1_200_000),
        file(eight, eight + 600_000, points: [(eight + 10_050, 12_000), (eight + 20_100, 24_000)]),
    ])

    @Test func aTimeIsFoundAtThePointBeforeItAndAGapIsSkipped() throws {
        let index = Self.index
        #expect(index.files.map(\.start) == [Self.eight, Self.eight + 720_000], "kept in time order")
        #expect(index.locate(Self.eight)?.offset == 0)
        #expect(index.locate(Self.eight + 10_049)?.offset == 0)
        let inside = try #require(index.locate(Self.eight + 15_000))
        #expect(inside.offset == 12_000 && inside.time == Self.eight + 10_050 && !inside.skippedGap)
        #expect(index.locate(Self.eight + 500_000)?.offset == 24_000)
        let gap = try #require(index.locate(Self.eight + 650_000))
        #expect(gap.file == "2026-12-05T08-12-00Z.opus" && gap.offset == 0 && gap.skippedGap)
        #expect(gap.time == Self.eight + 720_000)
        #expect(index.locate(Self.eight - 1) == nil, "before the archive")
        #expect(index.locate(Self.eight + 1_200_000) == nil, "at the live end: nothing yet")
        #expect(index.gaps == [(Self.eight + 600_000)..<(Self.eight + 720_000)])
        #expect(index.range == Self.eight...(Self.eight + 1_200_000))
        #expect(ArchiveIndex().locate(Self.eight) == nil)
    }

    @Test func theTextReadsBackAndDamageIsRefused() throws {
        let text = Self.index.text
        #expect(ArchiveIndex(text: text) == Self.index)
        #expect(ArchiveIndex(text: ArchiveIndex.textHeader + "\n") == ArchiveIndex())
        let lines = text.split(separator: "\n").map(String.init)
        var damaged: [String] = [
            String(text.dropLast()),  // no final line feed: cut short
            text.replacingOccurrences(of: ArchiveIndex.textHeader, with: "radio-relay-archive-index 2"),
            text.replacingOccurrences(of: "P \(Self.eight + 10_050) 12000", with: "P \(Self.eight + 10_050) 30000"),
            // A start more than 10 s before the second its name says (a start may be earlier, by the station's lead).
            text.replacingOccurrences(of: "08-12-00Z", with: "08-12-30Z"),
            text + "X 1 2\n",
            text + "P 1 2\n",
        ]
        damaged.append(([lines[0]] + lines[1...].reversed()).joined(separator: "\n") + "\n")
        for broken in damaged { #expect(ArchiveIndex(text: broken) == nil, "\(broken.prefix(80))") }
    }

    @Test func aScanFindsPagesTimesAndATornEndInAnyChunking() throws {
        let encoder = try Encoder(EncoderConfiguration())
        var bytes = encoder.headerPages.flatMap(\.bytes)
        var pages: [OggPage] = []
        for _ in 0..<250 { pages += try encoder.encodeSilence(frames: 4800) }  // 25 s
        var granuleStarts: [Int64] = []
        var previous: Int64 = 0
        for page in pages {
            granuleStarts.append(previous)
            previous = page.granulePosition
            bytes += page.bytes
        }
        let whole = Int64(bytes.count)
        let torn = bytes + Array(pages[0].bytes.prefix(40))
        var results: [ArchiveIndex.File] = []
        for chunk in [1, 7, 4096, torn.count] {
            var scanner = ArchiveScanner(name: "a", start: Self.eight, format: .opus)
            var offset = 0
            while offset < torn.count {
                scanner.feed(torn[offset..<min(torn.count, offset + chunk)])
                offset += chunk
            }
            #expect(scanner.validSize == whole && !scanner.isDamaged)
            results.append(scanner.file)
        }
        #expect(results.allSatisfy { $0 == results[0] }, "the same in any chunking")
        let file = try #require(results.first)
        #expect(file.end == Self.eight + previous / 48 && file.size == whole)
        #expect(file.points.map(\.time) == [Self.eight, Self.eight + 10_000, Self.eight + 20_000])
        // Each point is where a page starts whose first sample is at that time.
        for point in file.points.dropFirst() {
            let header = try #require(OggPageHeader.decode(bytes, at: Int(point.offset)))
            let index = try #require(pages.firstIndex { $0.sequence == header.sequence })
            #expect(Self.eight + granuleStarts[index] / 48 == point.time)
        }
        // A damaged page ends the valid part there.
        var broken = bytes
        broken[Int(file.points[1].offset) + 30] ^= 0xFF
        var scanner = ArchiveScanner(name: "a", start: Self.eight, format: .opus)
        scanner.feed(broken)
        #expect(scanner.isDamaged && scanner.validSize == file.points[1].offset)
    }

    @Test func mp3FramesAreTimedByTheirHeaders() throws {
        let bytes = try Fixture.bytes("stereo-44k-128k.mp3")
        let parser = Parser()
        var packets: [AudioPacket] = []
        let collect: (Parser.Event) -> Void = { if case .packet(let packet) = $0 { packets.append(packet) } }
        parser.parse(bytes, collect)
        parser.finish(collect)
        let frames = packets.flatMap(\.bytes)
        var scanner = ArchiveScanner(name: "a", start: Self.eight, format: .mp3)
        scanner.feed(frames + [0xFF, 0xFB])
        #expect(scanner.validSize == Int64(frames.count) && !scanner.isDamaged)
        let seconds = Double(packets.count) * 1152 / 44_100
        #expect(abs(Double(scanner.file.end - Self.eight) / 1000 - seconds) < 0.002)
        #expect(scanner.file.points.count == Int((seconds / 10).rounded(.up)))
    }
}
