import RadioRelaySystem

/// Splits an Ogg byte stream into pages and checks each one, independently of libogg: capture pattern, version
/// (`OggPageHeader`), CRC-32 (`OggCRC`, over the page with its CRC field zeroed) and the lacing. Used by the tests and
/// the fuzzers to verify what listeners receive, so it trusts nothing it is given.
public struct OggPageReader {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case badCapturePattern(offset: Int)
        case badVersion(offset: Int)
        case badChecksum(sequence: UInt32)

        public var description: String {
            switch self {
            case .badCapturePattern(let offset): return "no OggS capture pattern at byte \(offset)"
            case .badVersion(let offset): return "unknown Ogg version at byte \(offset)"
            case .badChecksum(let sequence): return "CRC mismatch on page \(sequence)"
            }
        }
    }

    public struct Page {
        public let header: OggPage
        /// Packets that end on this page, with any continued part from earlier pages joined on.
        public var packets: [[UInt8]]
        public var bytes: [UInt8] { header.bytes }
    }

    private var buffer: [UInt8] = []
    private var offset = 0
    private var consumed = 0
    /// Cuts each page into its packets, joining one that goes on from the page before (of any length, as before).
    private var splitter = OggPacketSplitter(maxPacket: .max)

    public init() {}

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete page, nil when more bytes are needed. A failure leaves the reader unusable for the stream.
    public mutating func next() throws -> Page? {
        let available = buffer.count - offset
        guard available >= 27 else {
            compact()
            return nil
        }
        let decoded = buffer.withUnsafeBytes { OggPageHeader.decode(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
        let fixed: OggPageHeader
        switch decoded {
        case .success(let header): fixed = header
        case .failure(.capturePattern): throw Failure.badCapturePattern(offset: consumed)
        case .failure(.version): throw Failure.badVersion(offset: consumed)
        }
        let segments = fixed.segments
        guard available >= 27 + segments else {
            compact()
            return nil
        }
        var bodyLength = 0
        for i in 0..<segments { bodyLength += Int(buffer[offset + 27 + i]) }
        let length = 27 + segments + bodyLength
        guard available >= length else {
            compact()
            return nil
        }
        let bytes = Array(buffer[offset..<offset + length])
        let header = OggPage(bytes: bytes)
        guard OggCRC.page(bytes) == fixed.checksum else { throw Failure.badChecksum(sequence: header.sequence) }
        offset += length
        consumed += length

        let packets = splitter.packets(of: bytes)
        return Page(header: header, packets: packets)
    }

    private mutating func compact() {
        if offset > 0 {
            buffer.removeFirst(offset)
            offset = 0
        }
    }

    /// The Ogg CRC of a whole page, taking its CRC field (bytes 22–25) as zero (`OggCRC.page`).
    public static func crc(_ page: [UInt8]) -> UInt32 {
        OggCRC.page(page)
    }
}
