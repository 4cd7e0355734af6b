import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Chained links (`Encoder.startLink`): where a link ends, how the next one starts, and that a player decodes
/// across the boundary without losing, repeating or damaging audio.
@Suite struct EncoderLinkTests {
    /// 3 s of the 440/1000 Hz tone pair in 1111-frame chunks, a link started before each frame index in `links`.
    static func encode(links: [Int: String], seconds: Double = 3, pageDuration: Int = 100) throws
        -> (pages: [OggPage], encoder: Encoder)
    {
        var configuration = EncoderConfiguration()
        configuration.serial = 0x1234_5678
        configuration.pageDuration = pageDuration
        configuration.comments = ["ARTIST=Someone", "TITLE=configured"]
        let encoder = try Encoder(configuration)
        var pages = encoder.headerPages
        let total = Int(seconds * 48_000)
        var cuts = links.keys.sorted()[...]
        var done = 0
        while done < total {
            var n = min(1111, total - done)
            if let cut = cuts.first { n = min(n, cut - done) }
            if n > 0 {
                let buffer = PCMBuffer(
                    left: EncoderTests.sine(440, frames: n, offset: done),
                    right: EncoderTests.sine(1000, frames: n, offset: done), sampleRate: 48_000)
                pages += try encoder.encode(buffer)
                done += n
            }
            if let cut = cuts.first, cut == done, let title = links[cut] {
                try encoder.startLink(title: title)
                cuts.removeFirst()
            }
        }
        pages += try encoder.finish()
        return (pages, encoder)
    }

    @Test func aLinkEndsWithAnEndOfStreamPageAndTheNextStartsWithItsOwnHeaders() throws {
        // 48 000 is a frame boundary (50 frames); 97 000 falls inside frame 102 (97 000 - 101 × 960 = 40).
        let (pages, encoder) = try Self.encode(links: [48_000: "First", 97_000: "Second – ünïcode"])
        #expect(encoder.linksStarted == 2)
        var serials: [UInt32] = []
        for page in pages where serials.last != page.serial { serials.append(page.serial) }
        #expect(serials.count == 3 && Set(serials).count == 3, "\(serials)")
        #expect(serials.first == 0x1234_5678)
        let links = serials.map { serial in pages.filter { $0.serial == serial } }

        // Link 0 ends with the keyframe that holds sample 48 000 (packet 51), alone on its flushed EOS page.
        let end0 = try #require(links[0].last)
        #expect(end0.isEnd && end0.granulePosition == 51 * 960)
        #expect(links[0].dropLast().allSatisfy { !$0.isEnd })
        // Link 1: BOS page with OpusHead (pre-skip one frame), OpusTags with the title, then audio whose granules
        // count from the link's start: the repeated keyframe and four more packets on its first page.
        let head = links[1][0]
        #expect(head.isBeginning && head.isHeader && head.sequence == 0 && head.granulePosition == 0)
        let headBody = Array(head.bytes[28...])
        #expect(Array(headBody[0..<8]) == Array("OpusHead".utf8))
        #expect(Int(headBody[10]) | Int(headBody[11]) << 8 == 960)
        let tags = links[1][1]
        #expect(tags.isHeader && !tags.isBeginning && tags.sequence == 1 && tags.granulePosition == 0)
        #expect(links[1][2].granulePosition == 5 * 960 && links[1][2].sequence == 2 && !links[1][2].isHeader)
        #expect(links[1].dropFirst().allSatisfy { !$0.isBeginning })
        // Link 1 ends with packet 102 (input 96 960 ..< 97 920 holds sample 97 000): 102 − 50 packets into it.
        #expect(links[1].last?.isEnd == true && links[1].last?.granulePosition == (102 - 50) * 960)
        // The timeline keeps counting across links and never goes back.
        let timeline = pages.map(\.timeline)
        #expect(zip(timeline, timeline.dropFirst()).allSatisfy { $0 <= $1 }, "\(timeline)")
        #expect(end0.timeline == 51 * 960 && head.timeline == 51 * 960 && links[1][2].timeline == 55 * 960)
        #expect(pages.last?.timeline == Int64(encoder.preSkip) + 144_000)

        let capture = try ChainedCapture(pages.flatMap(\.bytes))
        #expect(capture.problems.isEmpty, "\(capture.problems)")
        #expect(capture.links.map(\.title) == ["configured", "First", "Second – ünïcode"])
        let vendor = Encoder.vendor
        #expect(capture.links.map(\.vendor) == [vendor, vendor, vendor])
        #expect(capture.links.map { $0.comments.first } == ["ARTIST=Someone", "ARTIST=Someone", "ARTIST=Someone"])
        #expect(capture.links[1].comments == ["ARTIST=Someone", "TITLE=First"])
        #expect(capture.links.map(\.ended) == [true, true, true])
    }

    /// Decoded as a player does (a new decoder per link, pre-skip dropped, the end trimmed), the links together are
    /// exactly as long as the input, and the tones run through each boundary: no gap, no repeat, no click.
    @Test(arguments: [100, 20])
    func playersDecodeAcrossLinksWithoutAGapOrAClick(pageDuration: Int) throws {
        // Each link at least a second long (`Encoder.minLinkPackets`).
        let cuts = [48_000: "A", 97_000: "B", 146_013: "C"]
        let (pages, _) = try Self.encode(links: cuts, seconds: 4, pageDuration: pageDuration)
        let capture = try ChainedCapture(pages.flatMap(\.bytes))
        #expect(capture.problems.isEmpty, "\(capture.problems)")
        #expect(capture.links.count == 4)
        #expect(capture.left.count == 192_000)
        // The error against the input tones around each boundary is as small as elsewhere.
        func error(_ range: Range<Int>) -> Double {
            let reference = EncoderTests.sine(440, frames: range.count, offset: range.lowerBound)
            return zip(capture.left[range], reference).map { Double(abs($0 - $1)) }.max() ?? 0
        }
        let elsewhere = error(24_000..<40_000)
        for cut in cuts.keys {
            let around = error(cut - 2_000..<cut + 2_000)
            #expect(around < max(0.03, 2 * elsewhere), "at \(cut): \(around) against \(elsewhere) elsewhere")
        }
    }

    /// The reference tools accept a chained file, and ffmpeg decodes it whole, without an error line.
    @Test(
        .enabled(if: tool("opusinfo") != nil, "needs opusinfo (Debian: opus-tools)"),
        .enabled(if: tool("oggz-validate") != nil, "needs oggz-validate (Debian: oggz-tools)"),
        .enabled(if: tool("ffmpeg") != nil && tool("ffprobe") != nil, "needs ffmpeg and ffprobe")
    )
    func referenceToolsAcceptAChainedFile() throws {
        let (pages, _) = try Self.encode(links: [48_000: "A", 97_000: "B", 146_013: "C"], seconds: 4)
        let path = temporaryPath("chained.opus")
        try Data(pages.flatMap(\.bytes)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        try checkChainedFile(path, titles: ["configured", "A", "B", "C"], duration: 4.0)
    }

    /// Titles faster than one a second: a link lasts at least a second, and the title waiting for its turn is the
    /// newest (B never becomes a link; C starts one a second after A).
    @Test func titlesFasterThanASecondWaitAndTheNewestWins() throws {
        let (pages, encoder) = try Self.encode(links: [48_000: "A", 60_000: "B", 70_000: "C"])
        #expect(encoder.linksStarted == 2)
        let capture = try ChainedCapture(pages.flatMap(\.bytes))
        #expect(capture.problems.isEmpty, "\(capture.problems)")
        #expect(capture.links.map(\.title) == ["configured", "A", "C"])
        #expect(capture.left.count == 144_000)
        // C's link starts 50 packets (a second) after A's first packet.
        let starts = pages.filter(\.isBeginning).map(\.timeline)
        #expect(starts.count == 3 && starts[2] - starts[1] == 50 * 960, "\(starts)")
    }

    @Test func aSecondRequestBeforeTheCutOnlyReplacesTheTitleAndFinishStartsNoLink() throws {
        let (pages, encoder) = try Self.encode(links: [48_100: "early", 48_500: "late", 144_000: "too late"])
        #expect(encoder.linksStarted == 1)
        let capture = try ChainedCapture(pages.flatMap(\.bytes))
        #expect(capture.problems.isEmpty, "\(capture.problems)")
        #expect(capture.links.map(\.title) == ["configured", "late"])
        #expect(capture.left.count == 144_000)
    }

    /// Without `startLink` the stream is one logical stream, as before links existed, and its timeline is its
    /// granule position.
    @Test func withoutLinksTheStreamIsOneLogicalStream() throws {
        let (pages, encoder) = try Self.encode(links: [:])
        #expect(encoder.linksStarted == 0)
        #expect(Set(pages.map(\.serial)) == [0x1234_5678])
        #expect(pages.filter(\.isBeginning).count == 1 && pages.filter(\.isEnd).count == 1)
        #expect(pages.dropFirst(2).allSatisfy { $0.timeline == $0.granulePosition && !$0.isHeader })
    }
}
