import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The edge relay's pieces without sockets: Opus packet durations and header fields, the resyncing Ogg demuxer, and
/// the relay chain's rules for reconnects, restarts and new links.
@Suite struct OpusRelayTests {
    /// An Ogg Opus stream as a root relay sends it: its header pages, then `seconds` of a 440/1000 Hz tone.
    static func stream(serial: UInt32, seconds: Double, channels: Int = 2, from start: Double = 0) throws -> (
        headers: [UInt8], pages: [OggPage]
    ) {
        var configuration = EncoderConfiguration()
        configuration.serial = serial
        configuration.channels = channels
        let encoder = try Encoder(configuration)
        let frames = Int(seconds * 48_000)
        let offset = Int(start * 48_000)
        let left = (0..<frames).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0 + offset) / 48_000)) }
        let right = (0..<frames).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0 + offset) / 48_000)) }
        let pages = try encoder.encode(PCMBuffer(left: left, right: right, sampleRate: 48_000))
        return (encoder.headerPages.flatMap(\.bytes), pages)
    }

    static func feed(_ chain: OpusRelayChain, _ bytes: [UInt8], pieces: Int = 7) throws {
        var offset = 0
        var size = 1
        while offset < bytes.count {
            let end = min(bytes.count, offset + size)
            try bytes[offset..<end].withUnsafeBytes { try chain.feed($0) }
            offset = end
            size = size * 3 % 997 + pieces
        }
    }

    @Test func packetDurationsFromTheTOC() {
        #expect(OpusPacketInfo.samples([0xFC, 1, 2]) == 960)  // CELT 20 ms, one frame
        #expect(OpusPacketInfo.samples([0xFD]) == 1920)  // two frames
        #expect(OpusPacketInfo.samples([0xFB, 3]) == 2880)  // code 3, three frames
        #expect(OpusPacketInfo.samples([0x00]) == 480)  // SILK 10 ms
        #expect(OpusPacketInfo.samples([0x18]) == 2880)  // SILK 60 ms
        #expect(OpusPacketInfo.samples([0x60]) == 480)  // hybrid 10 ms
        #expect(OpusPacketInfo.samples([0x68]) == 960)  // hybrid 20 ms
        #expect(OpusPacketInfo.samples([0xFB]) == nil)  // code 3 without its count
        #expect(OpusPacketInfo.samples([0x1B, 3]) == nil)  // 3 × 60 ms > 120 ms
        #expect(OpusPacketInfo.samples([]) == nil)
    }

    @Test func headAndTagsFields() throws {
        let head = try #require(OpusPacketInfo.head(Encoder.opusHead(preSkip: 312, originalRate: 44_100)))
        #expect(head.channels == 2 && head.preSkip == 312 && head.inputRate == 44_100 && head.mappingFamily == 0)
        #expect(OpusPacketInfo.head(Array("OpusHead".utf8)) == nil)
        let tags = Encoder.opusTags(vendor: "v", comments: ["ARTIST=a", "title=Song"])
        let parsed = try #require(OpusPacketInfo.tags(tags))
        #expect(parsed.vendor == "v" && parsed.comments == ["ARTIST=a", "title=Song"])
        #expect(OpusPacketInfo.title(in: parsed.comments) == "Song")
        var lying = tags
        lying[11] = 0xFF  // a vendor length past the end
        #expect(OpusPacketInfo.tags(lying) == nil)
    }

    /// Whatever the chunking, with garbage between pages and a damaged page, the demuxer finds every packet of the
    /// pages it could read, in order, with their end granules.
    @Test func theDemuxerResyncsAndCounts() throws {
        let (headers, pages) = try Self.stream(serial: 7, seconds: 2)
        let garbage: [UInt8] = Array("HTTP/1.0 200 OK\r\n\r\nOggSnot a page".utf8)
        var bytes = headers + garbage
        var expected = 0
        for (index, page) in pages.enumerated() {
            var page = page.bytes
            if index == 5 {
                page[page.count - 1] ^= 0xFF  // a damaged page: its CRC fails
            } else {
                // Packets end at lacing values below 255.
                expected += page[27..<27 + Int(page[26])].filter { $0 < 255 }.count
            }
            bytes += page
        }
        var demuxer = OggDemuxer()
        var heads = 0
        var titles: [[String]] = []
        var granules: [Int64] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + 1 + offset % 113)
            demuxer.demux(Array(bytes[offset..<end])) { event in
                switch event {
                case .head(let serial, let head):
                    #expect(serial == 7 && head.channels == 2)
                    heads += 1
                case .tags(_, let comments): titles.append(comments)
                case .audio(_, _, let end): if let end { granules.append(end) }
                }
            }
            offset = end
        }
        #expect(heads == 1 && titles.count == 1)
        #expect(demuxer.statistics.badPages >= 1)
        #expect(demuxer.statistics.bytesSkipped >= garbage.count)
        #expect(granules.count == expected, "\(granules.count) packets, \(expected) expected")
        #expect(zip(granules, granules.dropFirst()).allSatisfy { $0 < $1 })
        #expect(granules.last == pages.last?.granulePosition)
    }

    /// The acceptance rules: the same packets out, one logical stream of the relay's own across a reconnect to the
    /// same stream (its burst skipped) and a root restart with a new serial; a mono restart starts a new link.
    @Test func oneStreamAcrossReconnectsAndRestarts() throws {
        var settings = OpusRelayChain.Settings()
        settings.serial = 4242
        let chain = try OpusRelayChain(settings)
        var out: [OggPage] = []
        let (headersA, pagesA) = try Self.stream(serial: 100, seconds: 3)
        // First connection: the headers and the first 2 s.
        try Self.feed(chain, headersA + pagesA.prefix(20).flatMap(\.bytes))
        try chain.release(seconds: 2)
        out += chain.takePages()
        let relayed = chain.statistics.packets
        #expect(relayed == 100)
        // A reconnect to the same stream: headers again, then a burst from 1 s back, then new pages.
        chain.restart()
        try Self.feed(chain, headersA + pagesA[10..<30].flatMap(\.bytes))
        #expect(chain.statistics.skipped == 50, "the burst's 1 s already relayed is skipped")
        try chain.release(seconds: 1)
        out += chain.takePages()
        // The root restarts: a new serial, same channels.
        let (headersB, pagesB) = try Self.stream(serial: 200, seconds: 1, from: 3)
        chain.restart()
        try Self.feed(chain, headersB + pagesB.flatMap(\.bytes))
        try chain.release(seconds: 1)
        out += chain.takePages()
        #expect(chain.statistics.links == 0)
        let single = try LiveCapture(chain.headerPages.flatMap(\.bytes) + out.flatMap(\.bytes))
        #expect(single.headerOK && single.sequenceGaps == 0 && single.granuleRegressions == 0)
        #expect(out.allSatisfy { $0.serial == 4242 })
        // 200 packets relayed (4 s); pages complete every 5, one packet is held for a possible end flag: 195 out.
        #expect(single.left.count == 195 * 960, "\(single.left.count) samples")
        #expect(abs(single.medianAmplitude(left: true, frequency: 440) - 0.5) < 0.05)
        #expect(abs(single.medianAmplitude(left: false, frequency: 1000) - 0.5) < 0.05)
        // Each new upstream stream carried on in the link starts a page of its own, marked for HLS: the first, and
        // the root's restart, whose page before ends with the first stream's 150th packet.
        let marked = out.indices.filter { out[$0].startsUpstreamStream }
        #expect(marked.count == 2 && marked.first == 0, "\(marked)")
        #expect(marked.count == 2 && out[marked[1] - 1].granulePosition == 150 * 960)
        // A mono root: a new link of the relay's own.
        let (headersC, pagesC) = try Self.stream(serial: 300, seconds: 1, channels: 1)
        chain.restart()
        try Self.feed(chain, headersC + pagesC.flatMap(\.bytes))
        try chain.release(seconds: 1)
        try chain.encodeSilence(frames: 48_000)
        out += chain.takePages()
        #expect(chain.statistics.links == 1)
        let bos = try #require(out.firstIndex { $0.isBeginning })
        #expect(out[bos].serial != 4242 && out[bos - 1].isEnd && out[bos - 1].serial == 4242)
        var reader = OggPageReader()
        reader.append(out[bos].bytes)
        let head = try #require(try reader.next()?.packets.first.flatMap(OpusPacketInfo.head))
        #expect(head.channels == 1)
        #expect(out[(bos + 2)...].allSatisfy { $0.serial == out[bos].serial && !$0.isHeader })
    }

    /// Titles in the upstream's OpusTags become events, and with `chainsTitles` links of the relay's own (a title
    /// before any audio names nothing: a link needs audio before it to end).
    @Test func titlesTravelAsEventsAndLinks() throws {
        let chain = try OpusRelayChain(OpusRelayChain.Settings())
        chain.chainsTitles = true
        func stream(serial: UInt32, title: String) throws -> [UInt8] {
            var configuration = EncoderConfiguration()
            configuration.serial = serial
            configuration.comments = ["TITLE=\(title)"]
            let encoder = try Encoder(configuration)
            let pages = try encoder.encode(.silence(frames: 48_000, sampleRate: 48_000))
            return encoder.headerPages.flatMap(\.bytes) + pages.flatMap(\.bytes)
        }
        try Self.feed(chain, try stream(serial: 1, title: "First"))
        try chain.release(seconds: 1)
        try Self.feed(chain, try stream(serial: 2, title: "Second"))
        try chain.release(seconds: 1)
        try Self.feed(chain, try stream(serial: 3, title: "Second"))
        try chain.release(seconds: 1)
        #expect(chain.takeEvents() == [.metadata(["StreamTitle": "First"]), .metadata(["StreamTitle": "Second"])])
        #expect(chain.statistics.links == 1)
        let pages = chain.takePages()
        let bos = try #require(pages.firstIndex { $0.isBeginning })
        #expect(pages[bos - 1].isEnd && pages[bos].serial != pages[bos - 1].serial)
        var reader = OggPageReader()
        reader.append(pages[bos + 1].bytes)
        let tags = try #require(try reader.next()?.packets.first.flatMap(OpusPacketInfo.tags))
        #expect(OpusPacketInfo.title(in: tags.comments) == "Second")
    }
}

/// Values from a hostile upstream that make no sense are counted stream errors, never a trap.
@Suite struct OpusRelayHostileTests {
    /// Pages of serial 7: OpusHead, OpusTags, then one page per (granule, packets).
    static func pages(_ audio: [(granule: Int64, packets: [[UInt8]])]) throws -> [UInt8] {
        let ogg = try OggStream(serial: 7)
        ogg.append(OpusRepager.defaultHead(), granule: 0, beginning: true)
        var bytes = ogg.flush().flatMap(\.bytes)
        ogg.append(Encoder.opusTags(vendor: "test", comments: []), granule: 0)
        bytes += ogg.flush().flatMap(\.bytes)
        for (granule, packets) in audio {
            // libogg writes the granule of a page's last packet; earlier packets get -1 (none ends the page).
            for (index, packet) in packets.enumerated() {
                ogg.append(packet, granule: index == packets.count - 1 ? granule : -1)
            }
            bytes += ogg.flush().flatMap(\.bytes)
        }
        return bytes
    }

    static let packet: [UInt8] = [0xFC, 0xFF, 0xFE]  // CELT 20 ms

    @Test func aGranuleOf2To63Minus1ThenMinus1IsAStreamError() throws {
        let chain = try OpusRelayChain(OpusRelayChain.Settings(), clock: { 0 })
        try OpusRelayTests.feed(chain, try Self.pages([(.max, [Self.packet]), (-1, [Self.packet, Self.packet])]))
        #expect(chain.statistics.streamErrors == 1)
        #expect(chain.statistics.packets == 3, "the audio itself goes on")
        try chain.release(seconds: 1)
        #expect(chain.queuedSeconds == 0)
    }

    @Test func granulesThatGoBackOrLeapADayAreStreamErrorsAndTheTimelineResumes() throws {
        let chain = try OpusRelayChain(OpusRelayChain.Settings(), clock: { 0 })
        let day = Int64(48_000 * 86_400)
        try OpusRelayTests.feed(
            chain,
            try Self.pages([
                (960, [Self.packet]), (10, [Self.packet]), (970, [Self.packet]), (970 + 2 * day, [Self.packet]),
                (970 + 2 * day + 960, [Self.packet]),
            ]))
        // Back from 960 to 10, then a two-day leap: two errors; 10 → 970 and the last step are ordinary.
        #expect(chain.statistics.streamErrors == 2)
        #expect(chain.statistics.packets == 5)
    }

    @Test func aPacketLargerThanItsDurationAllowsIsDropped() throws {
        let chain = try OpusRelayChain(OpusRelayChain.Settings(), clock: { 0 })
        let oversized = [UInt8(0x80)] + [UInt8](repeating: 0, count: 3000)  // CELT 2.5 ms, one frame, 3001 bytes
        let largest = [UInt8(0x80)] + [UInt8](repeating: 0, count: 1275)  // the most one frame may hold
        try OpusRelayTests.feed(chain, try Self.pages([(120, [oversized]), (240, [largest])]))
        #expect(chain.statistics.streamErrors == 1 && chain.statistics.packets == 1)
        #expect(!OpusPacketInfo.sizeFits(oversized, streams: 1) && OpusPacketInfo.sizeFits(largest, streams: 1))
        #expect(OpusPacketInfo.sizeFits(oversized, streams: 3), "three streams of 2.5 ms may hold 3001 bytes")
    }
}
