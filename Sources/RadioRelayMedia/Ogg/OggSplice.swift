/// One listener's Ogg Opus stream carried on over another stream's pages: a listener moved from one station to
/// another (`moveclients`) keeps its own logical stream — its serial, its page sequence, its granule positions going
/// on from where they were — while the pages' packets come from the destination's encoder. Each incoming page is
/// re-stamped (serial, sequence, granule, the flags of a link's first and last page cleared, the CRC) and its
/// packets go on as they are, so the listener's decoder sees one continuous stream, as an edge's listeners do across
/// a root restart. The destination's header pages are left out while their channel count and mapping are the
/// listener's (`OpusPacketInfo.Head.carriesPackets`); where they differ, the listener's stream ends (an end-of-stream
/// page) and the destination's link follows as it is, headers first: from then on its pages go unchanged
/// (`passing`).
///
/// A pure value over bytes: no ring, no socket (tests: `OggSpliceTests`).
package struct OggSplice: Sendable, Equatable {
    /// The listener's stream: its serial, the sequence number of its next page, the granule of its last page.
    package let serial: UInt32
    package private(set) var sequence: UInt32
    package private(set) var granule: Int64
    /// The channel count and mapping its decoder was set up for (its OpusHead's).
    package let head: OpusPacketInfo.Head
    /// The incoming stream's granule before its next page: the pages' granules count on from it.
    private var base: Int64
    /// Bytes that go out before the next page (a new link: the end of the listener's stream and the destination's
    /// header pages).
    private var prefix: [UInt8] = []
    /// The listener is in the destination's own stream now: its pages go as they are.
    package private(set) var passing = false

    /// The stream after `lastPage` (the last page the listener was sent, or is being sent), whose OpusHead is the
    /// packet of `headPage`; nil when either is not what it should be.
    /// - Parameter base: the granule of the incoming page before the first one carried (0 at the start of a link).
    package init?(lastPage: UnsafeRawBufferPointer, headPage: UnsafeRawBufferPointer, base: Int64) {
        guard case .success(let last) = OggPageHeader.decode(lastPage), let head = Self.head(of: headPage) else {
            return nil
        }
        serial = last.serial
        sequence = last.sequence &+ 1
        granule = max(0, last.granulePosition)
        self.head = head
        self.base = max(0, base)
    }

    /// The incoming stream's header pages (OpusHead first, as a new listener gets them): when its channel count or
    /// mapping is not the listener's, the next page carried is preceded by the end of the listener's stream and
    /// these headers, and the pages pass unchanged from then on. False when the headers cannot be read.
    @discardableResult
    package mutating func meet(headers: [UnsafeRawBufferPointer]) -> Bool {
        guard let first = headers.first, let incoming = Self.head(of: first) else { return false }
        guard !head.carriesPackets(of: incoming) else { return true }
        prefix = endOfStream()
        for page in headers { prefix += Array(page) }
        return true
    }

    /// The bytes that carry one incoming page to the listener: the page re-stamped; nothing for a header page of a
    /// link the listener's decoder can go on with; after a new link, the page as it is.
    /// - Parameter isHeader: whether it is one of a link's header pages (OpusHead, OpusTags).
    /// - Parameter ends: the page ends the listener's stream (its end-of-stream flag is set: an archive file's last
    ///   page).
    package mutating func carry(_ page: UnsafeRawBufferPointer, isHeader: Bool, ends: Bool = false) -> [UInt8] {
        guard !passing else { return Array(page) }
        if !prefix.isEmpty {
            passing = true
            defer { prefix = [] }
            return prefix + Array(page)
        }
        guard case .success(let header) = OggPageHeader.decode(page) else { return [] }
        if isHeader {
            // A later link of the incoming stream: its packets count from 0 again.
            base = 0
            guard header.isBeginning, let incoming = Self.head(of: page), !head.carriesPackets(of: incoming) else {
                return []
            }
            passing = true  // the listener's stream ends; the new link goes on as it is
            return endOfStream() + Array(page)
        }
        var out = Array(page)
        var stamped = Int64(-1)
        if header.granulePosition >= 0 {
            let (step, overflow) = header.granulePosition.subtractingReportingOverflow(base)
            let advance = overflow ? 0 : max(0, step)
            let (sum, past) = granule.addingReportingOverflow(advance)
            granule = past ? .max : sum
            base = header.granulePosition
            stamped = granule
        }
        let flags = header.flags & 1 | (ends ? 4 : 0)
        Self.stamp(&out, flags: flags, granule: stamped, serial: serial, sequence: sequence)
        sequence &+= 1
        return out
    }

    /// An empty page that ends the listener's stream (end-of-stream flag, its last granule).
    private mutating func endOfStream() -> [UInt8] {
        var page = [UInt8](repeating: 0, count: OggPageHeader.length)
        page[0] = 0x4F
        page[1] = 0x67
        page[2] = 0x67
        page[3] = 0x53
        Self.stamp(&page, flags: 4, granule: granule, serial: serial, sequence: sequence)
        sequence &+= 1
        return page
    }

    /// Writes the header fields of the page in `bytes` and its CRC (an archive file's last page is flagged with it
    /// after a crash, `ArchiveSession.markEnd`).
    package static func stamp(_ bytes: inout [UInt8], flags: UInt8, granule: Int64, serial: UInt32, sequence: UInt32) {
        bytes[5] = flags
        withUnsafeBytes(of: granule.littleEndian) { for i in 0..<8 { bytes[6 + i] = $0[i] } }
        withUnsafeBytes(of: serial.littleEndian) { for i in 0..<4 { bytes[14 + i] = $0[i] } }
        withUnsafeBytes(of: sequence.littleEndian) { for i in 0..<4 { bytes[18 + i] = $0[i] } }
        for i in 0..<4 { bytes[OggPageHeader.checksumOffset + i] = 0 }
        let crc = OggCRC.page(bytes)
        withUnsafeBytes(of: crc.littleEndian) { for i in 0..<4 { bytes[OggPageHeader.checksumOffset + i] = $0[i] } }
    }

    /// The OpusHead carried by a header page (its first packet), if it is one.
    package static func head(of page: UnsafeRawBufferPointer) -> OpusPacketInfo.Head? {
        guard case .success(let header) = OggPageHeader.decode(page) else { return nil }
        let bodyStart = OggPageHeader.length + header.segments
        guard page.count >= bodyStart else { return nil }
        var length = 0
        for index in 0..<header.segments {
            let lace = Int(page[OggPageHeader.length + index])
            length += lace
            if lace < 255 { break }
        }
        guard page.count >= bodyStart + length else { return nil }
        return OpusPacketInfo.head(Array(page[bodyStart..<bodyStart + length]))
    }

    /// The granule position of a page (-1 when no packet ends on it, or it is not a page).
    package static func granule(of page: UnsafeRawBufferPointer) -> Int64 {
        guard case .success(let header) = OggPageHeader.decode(page) else { return -1 }
        return header.granulePosition
    }
}
