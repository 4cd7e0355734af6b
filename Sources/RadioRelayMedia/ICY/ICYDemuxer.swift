import RadioRelaySystem

/// ICY demux: splits a SHOUTcast/Icecast body with `icy-metaint` into audio bytes and metadata blocks.
///
/// Every `interval` audio bytes comes one length byte (×16) and that many bytes of metadata text, usually
/// `StreamTitle='Artist - Title';StreamUrl='…';`. Titles are decoded as UTF-8 when valid, else as Windows-1252
/// (what SHOUTcast sources send). Works over any chunking; holds at most one metadata block (≤ 4 080 bytes).
public struct ICYDemuxer {
    public let interval: Int
    private var audioRemaining: Int
    private var metadataRemaining = -1  // -1: the next byte is the length byte
    private var metadata: [UInt8] = []
    /// Bytes of the stream that were metadata text, and length bytes (one per metadata block begun): with the audio
    /// handed out they add up to every byte demuxed.
    package private(set) var metadataBytes = 0
    package private(set) var lengthBytes = 0

    public init(interval: Int) {
        precondition(interval > 0)
        self.interval = interval
        self.audioRemaining = interval
    }

    /// Hands audio runs to `audio` and each complete metadata block's fields to `metadata`.
    public mutating func demux(
        _ bytes: UnsafeRawBufferPointer, audio: (UnsafeRawBufferPointer) throws -> Void,
        metadata onMetadata: ([String: String]) throws -> Void
    ) rethrows {
        var index = 0
        while index < bytes.count {
            if audioRemaining > 0 {
                let n = min(audioRemaining, bytes.count - index)
                audioRemaining -= n
                index += n
                try audio(UnsafeRawBufferPointer(rebasing: bytes[index - n..<index]))
                continue
            }
            if metadataRemaining < 0 {
                metadataRemaining = Int(bytes[index]) * 16
                index += 1
                lengthBytes += 1
                metadata.removeAll(keepingCapacity: true)
            } else {
                let n = min(metadataRemaining, bytes.count - index)
                metadata.append(contentsOf: bytes[index..<index + n])
                metadataRemaining -= n
                metadataBytes += n
                index += n
            }
            if metadataRemaining == 0 {
                let fields = Self.parse(metadata)
                metadataRemaining = -1
                audioRemaining = interval
                if !fields.isEmpty { try onMetadata(fields) }
            }
        }
    }

    /// Parses `Key='value';` pairs. A value may contain quotes and semicolons (titles do), so a value ends only at
    /// a `';` that is followed by the end or by another `Key=`.
    package static func parse(_ raw: [UInt8]) -> [String: String] {
        var bytes = raw
        while let last = bytes.last, last == 0 { bytes.removeLast() }  // NUL padding
        var fields: [String: String] = [:]
        var i = 0
        while i < bytes.count {
            guard let equals = bytes[i...].firstIndex(of: UInt8(ascii: "=")) else { break }
            let key = decodeText(Array(bytes[i..<equals])).trimmingWhitespace()
            var valueStart = equals + 1
            let quoted = valueStart < bytes.count && bytes[valueStart] == UInt8(ascii: "'")
            if quoted { valueStart += 1 }
            var end = bytes.count
            var next = bytes.count
            var j = valueStart
            while j < bytes.count {
                if quoted, bytes[j] == UInt8(ascii: "'"), j + 1 < bytes.count, bytes[j + 1] == UInt8(ascii: ";"),
                    isFieldStart(bytes, at: j + 2)
                {
                    end = j
                    next = j + 2
                    break
                }
                if quoted, bytes[j] == UInt8(ascii: "'"),
                    j + 1 == bytes.count || (j + 2 == bytes.count && bytes[j + 1] == UInt8(ascii: ";"))
                {
                    end = j
                    next = bytes.count
                    break
                }
                if !quoted, bytes[j] == UInt8(ascii: ";") {
                    end = j
                    next = j + 1
                    break
                }
                j += 1
            }
            if !key.isEmpty { fields[key] = decodeText(Array(bytes[valueStart..<max(valueStart, end)])) }
            i = next
        }
        return fields
    }

    /// At the end, or at `Word=`.
    private static func isFieldStart(_ bytes: [UInt8], at i: Int) -> Bool {
        var j = i
        while j < bytes.count, bytes[j] == UInt8(ascii: " ") { j += 1 }
        if j >= bytes.count { return true }
        var k = j
        while k < bytes.count,
            (bytes[k] >= 0x41 && bytes[k] <= 0x5A) || (bytes[k] >= 0x61 && bytes[k] <= 0x7A)
                || bytes[k] == UInt8(ascii: "_")
        { k += 1 }
        return k > j && k < bytes.count && bytes[k] == UInt8(ascii: "=")
    }

    /// UTF-8 when the bytes are valid UTF-8, else Windows-1252.
    public static func decodeText(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(bytes.map { windows1252($0) }))
    }

    private static let high: [UInt32] = [
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD,
        0x017D, 0xFFFD, 0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A,
        0x0153, 0xFFFD, 0x017E, 0x0178,
    ]

    private static func windows1252(_ byte: UInt8) -> Unicode.Scalar {
        if (0x80...0x9F).contains(byte) { return Unicode.Scalar(high[Int(byte) - 0x80])! }
        return Unicode.Scalar(byte)
    }
}
