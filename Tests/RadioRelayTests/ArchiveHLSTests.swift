import Foundation
import RadioRelaySystem
import RadioRelayTestSupport
import Testing

@testable import RadioRelayMedia

/// The archive's HLS as pure values: the playlist's window (the last three hours, or a closed one from `start=`),
/// names that always mean the same 10 s, gaps listed with `EXT-X-GAP`; and a segment made of the packets that start
/// in its 10 s, across a file boundary, its decode time the first packet's start since the epoch (so two segments
/// that follow each other join without a gap or an overlap).
@Suite struct ArchiveHLSTests {
    static let eight = ArchiveRulesTests.eight

    static func entry(_ start: Int64, _ end: Int64) -> ArchiveIndex.File {
        ArchiveIndex.File(
            name: ArchiveName.name(start: start, format: .opus), start: start, end: end, size: 1000,
            points: [ArchiveIndex.Point(time: start, offset: 0)])
    }

    @Test func thePlaylistIsAWindowOfWholeSegmentsOnTheClock() throws {
        let hour: Int64 = 3_600_000
        // Five hours, a gap of a minute in the fourth.
        let index = ArchiveIndex(files: [
            Self.entry(Self.eight + 3_250, Self.eight + 3 * hour + 30_000),
            Self.entry(Self.eight + 3 * hour + 90_000, Self.eight + 5 * hour + 4_000),
        ])
        let live = try #require(ArchivePlaylist.media(index))
        let names = live.split(separator: "\n").filter { $0.hasPrefix("archive-") && $0.hasSuffix(".m4s") }
        #expect(names.count == 1_080, "three hours of 10 s")
        #expect(names.last == Substring(ArchivePlaylist.segmentName(Self.eight + 5 * hour - 10_000)))
        #expect(live.contains("#EXT-X-MEDIA-SEQUENCE:\((Self.eight + 2 * hour) / 10_000)\n"))
        #expect(!live.contains("#EXT-X-ENDLIST") && live.contains("#EXT-X-MAP:URI=\"archive-init.mp4\""))
        #expect(live.components(separatedBy: "#EXT-X-GAP").count - 1 == 6, "the minute's segments")
        // From the start, paged: closed, from the first whole segment.
        let paged = try #require(ArchivePlaylist.media(index, start: Self.eight))
        #expect(paged.contains("#EXT-X-MEDIA-SEQUENCE:\(Self.eight / 10_000 + 1)\n"))
        #expect(paged.contains("#EXT-X-PLAYLIST-TYPE:VOD") && paged.hasSuffix("#EXT-X-ENDLIST\n"))
        #expect(paged.contains("#EXT-X-PROGRAM-DATE-TIME:2026-12-05T08:00:10.000Z\n"))
        #expect(ArchivePlaylist.media(ArchiveIndex()) == nil)
        #expect(ArchivePlaylist.segment("archive-1796457600.m4s")?.start == 1_796_457_600_000)
        #expect(ArchivePlaylist.segment("archive-1796457600.ts")?.container == .ts)
        let bad = [
            "archive-1796457601.m4s", "archive-.m4s", "archive--10.m4s", "archive-9999999999999.m4s", "x.m4s",
            "archive-1796457600.mp4", "archive-1796457600.ts.m4s", "archive-+10.ts", "archive-1796457600",
        ]
        for name in bad { #expect(ArchivePlaylist.segment(Substring(name)) == nil, "\(name)") }
        // The same window in MPEG-TS: the same times and gaps, `.ts` names, no init segment.
        let ts = try #require(ArchivePlaylist.media(index, start: Self.eight, container: .ts))
        #expect(
            ts.replacingOccurrences(of: ".ts\n", with: ".m4s\n").replacingOccurrences(
                of: "VERSION:3", with: "VERSION:7")
                == paged.replacingOccurrences(of: "#EXT-X-MAP:URI=\"archive-init.mp4\"\n", with: ""))
        #expect(ArchivePlaylist.Container(playlist: "archive-ts.m3u8") == .ts)
        #expect(ArchivePlaylist.Container(playlist: "archive.m3u8") == .fmp4)
        #expect(ArchivePlaylist.Container(playlist: "archive.ts.m3u8") == nil)
    }

    @Test func segmentsHoldThePacketsThatStartInTheirTenSecondsAcrossFiles() throws {
        let encoder = try Encoder(EncoderConfiguration())
        var base: Int64 = 0
        // Two files of 8 s each, the second right after the first.
        let (first, _) = try ArchivePlayheadTests.file(start: Self.eight, pages: 80, encoder: encoder, base: &base)
        let (second, _) = try ArchivePlayheadTests.file(
            start: Self.eight + 8_000, pages: 80, encoder: encoder, base: &base)
        func pages(_ bytes: [UInt8]) -> [[UInt8]] {
            var out: [[UInt8]] = []
            var offset = 0
            while case .ogg(let length, _, _) = ArchiveUnit.find(in: bytes, at: offset, format: .opus) {
                out.append(Array(bytes[offset..<offset + length]))
                offset += length
            }
            return out
        }
        var made: [ArchiveSegment] = []
        for start in [Self.eight, Self.eight + 10_000] {
            // One channel until the file's OpusHead says two.
            var segment = ArchiveSegment(from: start, to: start + 10_000, channels: 1)
            segment.enter(fileStart: Self.eight)
            for page in pages(first) where !segment.isComplete { segment.page(page) }
            segment.enter(fileStart: Self.eight + 8_000)
            for page in pages(second) where !segment.isComplete { segment.page(page) }
            made.append(segment)
        }
        #expect(made[0].isComplete && !made[1].isComplete)
        #expect(made[0].decodeTime == Self.eight * 48)
        let samples0 = made[0].packets.reduce(0) { $0 + $1.duration }
        #expect(samples0 == 480_000, "10 s of 20 ms packets")
        #expect(made[1].decodeTime == Self.eight * 48 + Int64(samples0), "the next starts where it ended")
        #expect(made[1].packets.reduce(0) { $0 + $1.duration } == 6 * 48_000)
        let bytes = try #require(made[0].segment(sequence: 7))
        #expect(Array(bytes[4..<8]) == Array("moof".utf8))
        // In MPEG-TS: the same packets, each at its start (MPEGTSOpusTests reads the stream).
        let ts = try MPEGTSOpusTests.read(try #require(made[1].transportStream(sequence: 8)))
        #expect(try ts.pes.map { try MPEGTSOpusTests.opus($0.bytes) } == made[1].packets.map(\.bytes))
        #expect(ts.pes.first?.pts == MPEGTSOpus.ticks(Self.eight * 48 + Int64(samples0)))
        #expect(made.map(\.channels) == [2, 2], "the file's OpusHead")
    }
}
