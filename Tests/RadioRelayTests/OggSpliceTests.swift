import Testing

@testable import RadioRelayMedia

/// A listener moved to another station keeps its own Ogg stream (`OggSplice`): the other stream's pages come with
/// its serial, its page sequence going on, its granules counting on from its last, their CRCs right; the other
/// stream's header pages are left out while its decoder can go on, and a new link starts where it cannot.
@Suite struct OggSpliceTests {
    /// One logical stream as libogg pages it: OpusHead, OpusTags, then `count` pages of five 20 ms packets each,
    /// its granules starting at `from` (a station that has played for a while).
    static func stream(serial: UInt32, channels: Int = 2, from: Int64 = 0, count: Int) throws -> [[UInt8]] {
        let ogg = try OggStream(serial: serial)
        var pages: [[UInt8]] = []
        ogg.append(
            Encoder.opusHead(preSkip: 312, originalRate: 48_000, channels: channels), granule: 0, beginning: true)
        pages += ogg.flush().map(\.bytes)
        ogg.append(Encoder.opusTags(vendor: "test", comments: []), granule: 0)
        pages += ogg.flush().map(\.bytes)
        var granule = from
        for page in 0..<count {
            for packet in 0..<5 {
                granule += 960
                ogg.append([0xFC, UInt8(page & 0xFF), UInt8(packet)], granule: granule)
            }
            pages += ogg.flush().map(\.bytes)
        }
        return pages
    }

    static func header(_ page: [UInt8]) -> OggPageHeader? { OggPageHeader.decode(page) }

    /// Reads the spliced bytes back as one stream: every page's CRC checks, one serial, no sequence gap, granules
    /// never going back.
    static func check(_ bytes: [UInt8]) throws -> [OggPageReader.Page] {
        var reader = OggPageReader()
        reader.append(bytes)
        var pages: [OggPageReader.Page] = []
        while let page = try reader.next() { pages.append(page) }
        return pages
    }

    @Test func theOtherStreamsPagesGoOnInTheListenersStream() throws {
        let mine = try Self.stream(serial: 111, count: 4)
        let theirs = try Self.stream(serial: 222, from: 9_600_000, count: 6)
        let last = try #require(mine.last)
        // It goes on at their third audio page (index 4); the one before ends at their granule base.
        let base = try #require(Self.header(theirs[3])).granulePosition
        var splice = try #require(
            last.withUnsafeBytes { lastPage in
                mine[0].withUnsafeBytes { OggSplice(lastPage: lastPage, headPage: $0, base: base) }
            })
        #expect(splice.meet(headers: []) == false, "no headers: nothing to meet")
        var out = mine.flatMap { $0 }
        for page in theirs[4...] {
            let carried = page.withUnsafeBytes { splice.carry($0, isHeader: false) }
            #expect(carried.count == page.count, "a page keeps its size")
            out += carried
        }
        let pages = try Self.check(out)
        #expect(pages.count == mine.count + 4)
        let serials = Set(pages.map { $0.header.serial })
        #expect(serials == [111])
        for (index, page) in pages.enumerated() {
            #expect(page.header.sequence == UInt32(index), "page \(index)")
            #expect(!page.header.isEnd && (index == 0) == page.header.isBeginning)
        }
        // Granules: mine ended at 4 × 4800; each carried page adds its own 4800.
        let granules = pages.dropFirst(2).map(\.header.granulePosition)
        #expect(granules == (1...8).map { Int64($0 * 4800) })
        // Their packets, untouched.
        #expect(pages.last?.packets.last == [0xFC, 5, 4])
    }

    @Test func aLaterLinkOfTheSameShapeIsLeftOutAndCountsFromZero() throws {
        let mine = try Self.stream(serial: 1, count: 2)
        let theirs = try Self.stream(serial: 2, count: 2)
        let next = try Self.stream(serial: 3, count: 2)  // their next link (a chained title)
        var splice = try #require(
            mine[3].withUnsafeBytes { last in
                mine[0].withUnsafeBytes { OggSplice(lastPage: last, headPage: $0, base: 0) }
            })
        var out = mine.flatMap { $0 }
        for page in theirs[2...] { out += page.withUnsafeBytes { splice.carry($0, isHeader: false) } }
        for page in next[..<2] { #expect(page.withUnsafeBytes { splice.carry($0, isHeader: true) }.isEmpty) }
        for page in next[2...] { out += page.withUnsafeBytes { splice.carry($0, isHeader: false) } }
        let pages = try Self.check(out)
        #expect(Set(pages.map(\.header.serial)) == [1])
        #expect(pages.dropFirst(2).map(\.header.granulePosition) == (1...6).map { Int64($0 * 4800) })
        #expect(!splice.passing)
    }

    /// A mono destination for a stereo listener: its stream ends (an empty end-of-stream page at its last granule),
    /// their link follows as it is, headers first, and their pages pass unchanged from then on.
    @Test func anotherChannelCountStartsANewLink() throws {
        let mine = try Self.stream(serial: 7, count: 2)
        let theirs = try Self.stream(serial: 8, channels: 1, count: 3)
        var splice = try #require(
            mine[3].withUnsafeBytes { last in
                mine[0].withUnsafeBytes { OggSplice(lastPage: last, headPage: $0, base: 0) }
            })
        let headers = theirs[0].withUnsafeBytes { head in
            theirs[1].withUnsafeBytes { tags in splice.meet(headers: [head, tags]) }
        }
        #expect(headers)
        var out = mine.flatMap { $0 }
        for page in theirs[2...] { out += page.withUnsafeBytes { splice.carry($0, isHeader: false) } }
        #expect(splice.passing)
        let pages = try Self.check(out)
        let eos = try #require(pages.first { $0.header.isEnd })
        #expect(eos.header.serial == 7 && eos.header.granulePosition == 9600 && eos.packets.isEmpty)
        #expect(pages.map(\.header.serial) == [7, 7, 7, 7, 7, 8, 8, 8, 8, 8])
        #expect(Array(pages.suffix(5).map(\.bytes)) == Array(theirs))
    }

    /// Granules from the wire are not trusted: one that goes back adds nothing, one past Int64.max saturates.
    @Test func granulesNeverGoBackOrOverflow() throws {
        let mine = try Self.stream(serial: 5, count: 1)
        var splice = try #require(
            mine[2].withUnsafeBytes { last in
                mine[0].withUnsafeBytes { OggSplice(lastPage: last, headPage: $0, base: .max - 10) }
            })
        var page = mine[2]
        withUnsafeBytes(of: Int64(5).littleEndian) { for i in 0..<8 { page[6 + i] = $0[i] } }
        let back = page.withUnsafeBytes { splice.carry($0, isHeader: false) }
        #expect(Self.header(back)?.granulePosition == 4800, "no step back")
        withUnsafeBytes(of: Int64.max.littleEndian) { for i in 0..<8 { page[6 + i] = $0[i] } }
        let far = page.withUnsafeBytes { splice.carry($0, isHeader: false) }
        #expect(Self.header(far)?.granulePosition == .max)
        // Not a page at all: nothing goes out.
        #expect([UInt8](repeating: 7, count: 40).withUnsafeBytes { splice.carry($0, isHeader: false) }.isEmpty)
        _ = try Self.check(mine.flatMap { $0 } + back)
    }
}
