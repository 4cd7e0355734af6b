import Testing

@testable import RadioRelayMedia
@testable import RadioRelayNet

/// The pages of listeners moved together (`SplicedStream`): made once, shared by every listener that needs the same
/// ones, each the ring's page re-stamped in the listeners' stream; bounded to the ring's capacity; a request for a page
/// not published yet changes nothing.
@Suite struct SplicedStreamTests {
    /// A ring holding their stream's header pages and `count` audio pages.
    static func ring(serial: UInt32, count: Int, capacity: Int = 64) throws -> (PageRing, [[UInt8]]) {
        let pages = try OggSpliceTests.stream(serial: serial, count: count)
        let ring = PageRing(capacity: capacity)
        ring.setHeaders(pages[..<2].map { OggPage(bytes: $0) })
        var published: [OggPage] = []
        for (offset, bytes) in pages[2...].enumerated() {
            var page = OggPage(bytes: bytes)
            page.timeline = Int64(offset + 1) * 4_800
            published.append(page)
        }
        ring.publish(published)
        return (ring, pages)
    }

    @Test func listenersMovedTogetherShareEachPage() throws {
        let (ring, theirs) = try Self.ring(serial: 2, count: 30)
        var view = RingSnapshot()
        view.refresh(from: ring)
        let mine = try OggSpliceTests.stream(serial: 1, count: 3)
        let ogg = try #require(
            mine[4].withUnsafeBytes { last in
                mine[0].withUnsafeBytes { OggSplice(lastPage: last, headPage: $0, base: 4_800) }
            })
        let stream = SplicedStream(ogg, start: 1, keep: 16)
        let first = ListenerSplice(stream: stream, carried: nil, at: 0)
        let second = ListenerSplice(stream: stream, carried: nil, at: 0)
        #expect(stream.page(view.head, ring: view) == nil, "not published yet")
        let made = try #require(first.page(3, ring: view))
        #expect(second.page(3, ring: view) === made, "made once")
        #expect(second.page(1, ring: view) === first.page(1, ring: view))
        // Re-stamped: their third audio page (ring index 2) follows my last (sequence 4) and granule.
        let header = try #require(made.bytes.count >= 27 ? OggPageHeader(fields: made.bytes) : nil)
        #expect(header.serial == 1 && header.sequence == 7 && header.granulePosition == 14_400 + 3 * 4_800)
        #expect(made.bytes.count == theirs[5].count)
        // Bounded: only the last 16 made are kept; an old one is gone, not made again.
        for index in 4...25 { _ = first.page(Int64(index), ring: view) }
        #expect(second.page(4, ring: view) == nil && second.page(12, ring: view) != nil)
        #expect(first.keepsHeaders && !first.isDone(cursor: 25))
        // A listener further on (moved to the live edge): the pages before it are made in order, the sequence going on.
        let jumped = try #require(second.page(29, ring: view))
        #expect(OggPageHeader(fields: jumped.bytes).sequence == OggPageHeader(fields: made.bytes).sequence + 26)
    }

    /// An MP3 listener's carried page comes first, then the ring's own pages; then it needs no splice.
    @Test func aCarriedPageComesFirstThenTheRingsOwn() throws {
        let (ring, _) = try Self.ring(serial: 3, count: 4)
        var view = RingSnapshot()
        view.refresh(from: ring)
        let carried = SharedPage(bytes: [1, 2, 3], timeline: 0, index: 99)
        let splice = ListenerSplice(stream: nil, carried: carried, at: 1)
        #expect(splice.page(1, ring: view) === carried && splice.page(2, ring: view) === view.page(2))
        #expect(!splice.isDone(cursor: 1))
        splice.trim(cursor: 3)
        #expect(splice.page(1, ring: view) === view.page(1) && splice.isDone(cursor: 3) && !splice.keepsHeaders)
    }
}
