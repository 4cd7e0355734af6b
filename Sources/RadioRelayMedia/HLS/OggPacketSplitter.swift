/// The packets of a station's own Ogg pages, in order: a page's lacing values cut its body into packets, and a
/// packet that goes on to the next page (a last lacing value of 255) is joined with the rest there. The pages come
/// from the station's own encoder or repager, whole and checked; this still never traps on a short page (what does
/// not fit is dropped) and holds at most `maxPacket` bytes of a packet across pages.
package struct OggPacketSplitter: Sendable {
    /// The most bytes a packet may gather across pages: more is no Opus packet (RFC 6716 allows 120 ms at most).
    package static let maxPacket = 64 * 1024
    private var partial: [UInt8] = []
    /// The packet being gathered grew past `maxPacket`: it is dropped when it ends.
    private var overflowed = false

    package init() {}

    /// The packets that end on `page` (a whole Ogg page: header, lacing values, body).
    package mutating func packets(of page: [UInt8]) -> [[UInt8]] {
        guard page.count >= 27 else { return [] }
        let segments = Int(page[26])
        guard page.count >= 27 + segments else { return [] }
        let continued = page[5] & 0x01 != 0
        if !continued {
            partial.removeAll(keepingCapacity: true)
            overflowed = false
        }
        var packets: [[UInt8]] = []
        var position = 27 + segments
        for index in 0..<segments {
            let lace = Int(page[27 + index])
            guard position + lace <= page.count else { break }
            if partial.count + lace <= Self.maxPacket {
                partial.append(contentsOf: page[position..<position + lace])
            } else {
                overflowed = true
            }
            position += lace
            if lace < 255 {
                if !overflowed { packets.append(partial) }
                partial.removeAll(keepingCapacity: true)
                overflowed = false
            }
        }
        return packets
    }
}
