import RadioRelayMedia

/// Checks one connection's Ogg byte stream as it arrives, in whatever pieces `read` returns, without buffering page
/// bodies: the page header (at most 27 + 255 bytes) is collected in a small slab owned by the caller and decoded with
/// the library's `OggPageHeader`, and the library's `OggCRC` runs over body bytes straight from the read buffer. No
/// allocation per page.
///
/// Checks: capture pattern "OggS" and version 0 (a failure here loses framing: the rest of the stream is not checked),
/// CRC-32 with the CRC field zeroed, one serial number, page sequence numbers contiguous (every jump is counted; the
/// caller allows one, the join gap), granule positions never decreasing (-1 ignored), and, when `checkStart` is set,
/// the RFC 7845 layout of the start: OpusHead alone on a BOS page, OpusTags starting the next page, and a first
/// audio page whose first packet is not continued.
struct OggStreamCheck {
    enum Phase: UInt8 { case header, segments, body, broken }

    /// Largest page header: 27 fixed bytes and up to 255 lacing values.
    static let slabSize = 27 + 255

    private(set) var phase = Phase.header
    /// Header bytes collected so far in the slab.
    private var fill = 0
    private var segments = 0
    private var bodyLeft = 0
    private var bodyDone = 0
    private var crc: UInt32 = 0
    private var storedCRC: UInt32 = 0
    private var sequence: UInt32 = 0
    private var serial: UInt32 = 0
    private var granule: Int64 = 0
    private var flags: UInt8 = 0
    /// The first 8 body bytes of the current page, big-endian in a word (only for the first two pages).
    private var magic: UInt64 = 0
    /// Packets of the header (OpusHead, OpusTags) completed before the current page; the first page that starts
    /// after both is the first audio page.
    private var headerPackets = 0
    private var pageIsHeader = true
    private var lastSequence: UInt32 = 0
    private var firstSerial: UInt32 = 0
    private var lastGranule: Int64 = -1

    /// Complete pages seen, all kinds.
    private(set) var pages = 0
    private(set) var audioPages = 0
    private(set) var crcErrors = 0
    /// Lost framing (no capture pattern or a bad version where a page should start).
    private(set) var framingErrors = 0
    /// OpusHead/OpusTags missing or misplaced, or a first audio page that is continued.
    private(set) var startErrors = 0
    private(set) var serialChanges = 0
    /// Every jump in page sequence numbers, the join gap included.
    private(set) var gaps = 0
    private(set) var granuleRegressions = 0
    /// The first problem found, in words (for the report's examples).
    private(set) var firstProblem: String?

    let checkStart: Bool

    init(checkStart: Bool) {
        self.checkStart = checkStart
    }

    var errorCount: Int { crcErrors + framingErrors + startErrors + serialChanges + granuleRegressions }

    /// Checks `count` more bytes at `bytes`; `slab` is this connection's `slabSize`-byte header buffer.
    mutating func feed(
        _ bytes: UnsafePointer<UInt8>, _ count: Int, slab: UnsafeMutablePointer<UInt8>
    ) {
        var p = bytes
        var n = count
        while n > 0 {
            switch phase {
            case .broken:
                return
            case .header, .segments:
                let want = (phase == .header ? 27 : 27 + segments) - fill
                let take = min(want, n)
                (slab + fill).update(from: p, count: take)
                fill += take
                p += take
                n -= take
                guard take == want else { return }
                if phase == .header {
                    switch OggPageHeader.decode(UnsafeRawBufferPointer(start: slab, count: OggPageHeader.length)) {
                    case .failure(.capturePattern): return lose("no OggS capture pattern after page \(pages)")
                    case .failure(.version): return lose("Ogg version \(slab[4]) after page \(pages)")
                    case .success(let header): segments = header.segments
                    }
                    phase = .segments
                    if segments > 0 { continue }
                }
                beginBody(slab: slab)
                if bodyLeft == 0 { endPage() }
            case .body:
                let take = min(bodyLeft, n)
                if pages < 2 && bodyDone < 8 {
                    for i in 0..<min(take, 8 - bodyDone) { magic |= UInt64(p[i]) << (56 - 8 * UInt64(bodyDone + i)) }
                }
                crc = OggCRC.update(crc, UnsafeRawBufferPointer(start: p, count: take))
                bodyLeft -= take
                bodyDone += take
                p += take
                n -= take
                if bodyLeft == 0 { endPage() }
            }
        }
    }

    private mutating func beginBody(slab: UnsafeMutablePointer<UInt8>) {
        let header = OggPageHeader(fields: UnsafeRawBufferPointer(start: slab, count: OggPageHeader.length))
        flags = header.flags
        granule = header.granulePosition
        serial = header.serial
        sequence = header.sequence
        storedCRC = header.checksum
        (slab + OggPageHeader.checksumOffset).update(repeating: 0, count: 4)
        crc = OggCRC.update(0, UnsafeRawBufferPointer(start: slab, count: OggPageHeader.length + segments))
        var length = 0
        var completed = 0
        for i in 0..<segments {
            let lace = Int(slab[27 + i])
            length += lace
            if lace < 255 { completed += 1 }
        }
        pageIsHeader = headerPackets < 2
        if pageIsHeader { headerPackets += completed }
        bodyLeft = length
        bodyDone = 0
        magic = 0
        phase = .body
    }

    private mutating func endPage() {
        if crc != storedCRC {
            crcErrors += 1
            note("CRC mismatch on page sequence \(sequence)")
        }
        if pages == 0 {
            firstSerial = serial
        } else {
            if serial != firstSerial {
                serialChanges += 1
                note("serial changed from \(firstSerial) to \(serial) at page sequence \(sequence)")
            }
            if sequence != lastSequence &+ 1 {
                gaps += 1
                if gaps > 1 { note("page sequence jumped from \(lastSequence) to \(sequence) (gap \(gaps))") }
            }
        }
        if granule != -1 {
            if lastGranule != -1 && granule < lastGranule {
                granuleRegressions += 1
                note("granule position went back from \(lastGranule) to \(granule) at page sequence \(sequence)")
            }
            lastGranule = granule
        }
        if checkStart {
            let continued = flags & 1 != 0
            if pages == 0 && (magic != 0x4F70_7573_4865_6164 || flags & 2 == 0 || bodyDone < 8) {
                startErrors += 1
                note("first page is not a BOS page starting with OpusHead")
            } else if pages == 1 && (magic != 0x4F70_7573_5461_6773 || continued || bodyDone < 8) {
                startErrors += 1
                note("second page does not start with OpusTags")
            } else if !pageIsHeader && audioPages == 0 && continued {
                startErrors += 1
                note("first audio page (sequence \(sequence)) starts with a continued packet")
            }
        }
        if !pageIsHeader { audioPages += 1 }
        pages += 1
        lastSequence = sequence
        fill = 0
        phase = .header
    }

    private mutating func lose(_ problem: String) {
        framingErrors += 1
        note(problem)
        phase = .broken
    }

    private mutating func note(_ problem: String) {
        if firstProblem == nil { firstProblem = problem }
    }
}
