import RadioRelaySystem

/// One Ogg page, serialized (header and body in one immutable array), with the fields the Broadcaster and the tests
/// need without parsing it again.
public struct OggPage: Sendable {
    public let bytes: [UInt8]
    /// Granule position of the last packet completed on the page; -1 when none completes on it.
    public let granulePosition: Int64
    public let sequence: UInt32
    public let serial: UInt32
    /// The page's first packet continues one from the previous page: not a clean place for a listener to start.
    public let isContinued: Bool
    public let isBeginning: Bool
    public let isEnd: Bool
    /// Where the page ends on the whole stream's clock, in 48 kHz samples: the granule position for a stream of one
    /// logical stream, but unlike the granule it keeps counting across chained links (each link's granules start
    /// again). The Encoder sets it; for a page read from bytes it is the granule position.
    package var timeline: Int64
    /// One of a link's header pages (OpusHead, OpusTags), which a listener who joins later needs first. The Encoder
    /// sets it.
    package var isHeader = false
    /// An edge relay's first page of another upstream stream carried on in the same link (`OpusRepager`): an HLS
    /// stream starts a new segment after a discontinuity here.
    package var startsUpstreamStream = false

    public init(bytes: [UInt8]) {
        precondition(bytes.count >= 27, "an Ogg page has a 27-byte header")
        self.bytes = bytes
        let flags = bytes[5]
        isContinued = flags & 1 != 0
        isBeginning = flags & 2 != 0
        isEnd = flags & 4 != 0
        granulePosition = Int64(bitPattern: Self.le64(bytes, 6))
        serial = UInt32(truncatingIfNeeded: Self.le64(bytes, 14) & 0xFFFF_FFFF)
        sequence = UInt32(truncatingIfNeeded: Self.le64(bytes, 18) & 0xFFFF_FFFF)
        timeline = granulePosition
    }

    private static func le64(_ b: [UInt8], _ offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in (0..<8).reversed() where offset + i < b.count { value = value << 8 | UInt64(b[offset + i]) }
        return value
    }
}
