/// The fixed part of an Ogg page's header (RFC 3533 §6): capture pattern, version, header type, granule position,
/// serial, sequence, CRC and the number of lacing values — decoded in one place for every reader of Ogg pages (the
/// relay's demuxer, the page reader of the tests, the load tool's streaming checker, the fuzzers), straight from the
/// bytes, without allocating.
public struct OggPageHeader: Sendable, Equatable {
    /// Bytes of the fixed part; the lacing values follow (`segments` of them), then the body.
    public static let length = 27
    /// Where the CRC field is: the checksum is computed with these four bytes taken as zero.
    public static let checksumOffset = 22
    /// "OggS", as a big-endian word.
    public static let capturePattern: UInt32 = 0x4F67_6753

    /// Header type: 1 continued packet, 2 beginning of stream, 4 end of stream.
    public let flags: UInt8
    /// Granule position of the last packet completed on the page (-1: none completes on it).
    public let granulePosition: Int64
    public let serial: UInt32
    public let sequence: UInt32
    /// The CRC the page carries.
    public let checksum: UInt32
    /// Lacing values that follow the fixed part.
    public let segments: Int

    /// Why a page cannot start here.
    public enum Problem: Error, Equatable, Sendable {
        case capturePattern
        case version
    }

    /// Decodes the fixed part at the start of `bytes` (at least `length` of them), or says why it is not one: no
    /// capture pattern, or a version other than 0.
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<OggPageHeader, Problem> {
        guard bytes.count >= length else { return .failure(.capturePattern) }
        guard UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)) == capturePattern else {
            return .failure(.capturePattern)
        }
        guard bytes[4] == 0 else { return .failure(.version) }
        return .success(OggPageHeader(fields: bytes))
    }

    /// The fields of the fixed part at the start of `bytes` (at least `length` of them), read as they are: for a
    /// page already known to be one (its capture pattern checked, or made here).
    public init(fields bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count >= Self.length, "an Ogg page header has 27 bytes")
        flags = bytes[5]
        granulePosition = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 6, as: Int64.self))
        serial = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 14, as: UInt32.self))
        sequence = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 18, as: UInt32.self))
        checksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 22, as: UInt32.self))
        segments = Int(bytes[26])
    }

    /// The same over an array's bytes from `offset` (nil when the decode fails or too few bytes are there).
    public static func decode(_ bytes: some ContiguousCollection<UInt8>, at offset: Int = 0) -> OggPageHeader? {
        bytes.withUnsafeBytes { raw -> OggPageHeader? in
            guard offset >= 0, raw.count - offset >= length else { return nil }
            guard case .success(let header) = decode(UnsafeRawBufferPointer(rebasing: raw[offset...])) else {
                return nil
            }
            return header
        }
    }

    /// Whether `bytes` has the capture pattern at `index` (and four bytes there to read).
    public static func isCapturePattern(_ bytes: [UInt8], at index: Int) -> Bool {
        index >= 0 && index + 4 <= bytes.count && bytes[index] == 0x4F && bytes[index + 1] == 0x67
            && bytes[index + 2] == 0x67 && bytes[index + 3] == 0x53
    }

    public var isContinued: Bool { flags & 1 != 0 }
    public var isBeginning: Bool { flags & 2 != 0 }
    public var isEnd: Bool { flags & 4 != 0 }
    /// Only the three defined header-type bits are set.
    public var hasDefinedFlags: Bool { flags & 0xF8 == 0 }
}

/// A collection whose elements lie in one contiguous buffer.
public protocol ContiguousCollection<Element>: Collection {
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension Array: ContiguousCollection {}
extension ArraySlice: ContiguousCollection {}

extension OggPageHeader {
    /// One packet's bytes on a page, as its lacing values place them.
    package struct PacketSpan: Equatable {
        /// Where its bytes are in the page.
        package var range: Range<Int>
        /// It began on a page before this one (the page's first packet, on a continued page).
        package var isContinuation: Bool
        /// It ends on this page (its last lacing value is below 255); the last packet may go on to the next page.
        package var isComplete: Bool
    }

    /// The packets on `page` (a whole page, header first), in order; nil when its header does not decode or its
    /// lacing values reach past its end (a torn page).
    package static func packets(of page: [UInt8]) -> [PacketSpan]? {
        guard let header = decode(page, at: 0) else { return nil }
        let bodyStart = length + header.segments
        guard page.count >= bodyStart else { return nil }
        var spans: [PacketSpan] = []
        var start = bodyStart
        var offset = bodyStart
        for index in 0..<header.segments {
            let lace = Int(page[length + index])
            offset += lace
            guard offset <= page.count else { return nil }
            if lace < 255 {
                spans.append(
                    PacketSpan(
                        range: start..<offset, isContinuation: spans.isEmpty && header.isContinued, isComplete: true))
                start = offset
            }
        }
        if header.segments > 0 && page[length + header.segments - 1] == 255 {
            spans.append(
                PacketSpan(
                    range: start..<offset, isContinuation: spans.isEmpty && header.isContinued, isComplete: false))
        }
        return spans
    }
}
