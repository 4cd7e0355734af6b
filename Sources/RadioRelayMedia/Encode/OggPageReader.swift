import RadioRelaySystem

/// Splits an Ogg byte stream into pages and checks each one, independently of libogg: capture pattern, version,
/// CRC-32 (polynomial 0x04C11DB7, computed over the page with its CRC field zeroed) and the lacing. Used by the tests,
/// the load tool and the latency bench to verify what listeners receive, so it trusts nothing it is given.
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
        guard buffer[offset] == 0x4F, buffer[offset + 1] == 0x67, buffer[offset + 2] == 0x67,
            buffer[offset + 3] == 0x53
        else { throw Failure.badCapturePattern(offset: consumed) }
        guard buffer[offset + 4] == 0 else { throw Failure.badVersion(offset: consumed) }
        let segments = Int(buffer[offset + 26])
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
        let stored = UInt32(bytes[22]) | UInt32(bytes[23]) << 8 | UInt32(bytes[24]) << 16 | UInt32(bytes[25]) << 24
        guard Self.crc(bytes) == stored else { throw Failure.badChecksum(sequence: header.sequence) }
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

    private static let table: [UInt32] = (0..<256).map { i in
        var r = UInt32(i) << 24
        for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? (r << 1) ^ 0x04C1_1DB7 : r << 1 }
        return r
    }

    /// The Ogg CRC of a whole page, taking its CRC field (bytes 22–25) as zero.
    public static func crc(_ page: [UInt8]) -> UInt32 {
        crc(page[...])
    }

    /// The same over a page in place (a slice of a larger buffer).
    package static func crc(_ page: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0
        var i = 0
        for byte in page {
            let b = i >= 22 && i <= 25 ? 0 : byte
            crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(b))]
            i += 1
        }
        return crc
    }
}
