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
        let header = bytes.withUnsafeBytes { OggPageHeader(fields: $0) }
        self.bytes = bytes
        isContinued = header.isContinued
        isBeginning = header.isBeginning
        isEnd = header.isEnd
        granulePosition = header.granulePosition
        serial = header.serial
        sequence = header.sequence
        timeline = granulePosition
    }
}
