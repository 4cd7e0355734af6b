/// The packets of a station's own Ogg pages, in order: `OggDemuxer.packets` cuts each page by its lacing values,
/// and the packet that goes on to the next page is carried here and joined with the rest there. The pages come from
/// the station's own encoder or repager, whole and checked; this still never traps on a short page (it is dropped)
/// and holds at most `maxPacket` bytes of a packet across pages (a longer one is dropped). `OggPageReader` cuts the
/// pages it reads with it too.
package struct OggPacketSplitter: Sendable {
    /// The most bytes a packet may gather across pages: a longer one is dropped.
    package let maxPacket: Int
    /// The packet the last page left unfinished, and whether it is already too long.
    private var partial: [UInt8] = []
    private var broken = false

    package init(maxPacket: Int = OggDemuxer.maxPacket) {
        self.maxPacket = max(0, maxPacket)
    }

    /// The packets that end on `page` (a whole Ogg page: header, lacing values, body).
    package mutating func packets(of page: [UInt8]) -> [[UInt8]] {
        guard page.count >= OggPageHeader.length else { return [] }
        let header = page.withUnsafeBytes { OggPageHeader(fields: $0) }
        let segments = header.segments
        guard page.count >= 27 + segments,
            page.count >= 27 + segments + page[27..<27 + segments].reduce(0, { $0 + Int($1) })
        else { return [] }
        // A page that is not continued starts afresh: what was carried ended unfinished, and is dropped.
        let continued = header.isContinued
        let split = OggDemuxer.packets(
            of: page, carried: continued ? partial : [], dropFirst: continued && broken, limit: maxPacket)
        partial = split.rest ?? []
        broken = split.restBroken
        return split.packets
    }
}
