import RadioRelaySystem

/// The title of an MP3 file from the ID3v2 tag at its start (`TIT2`; `TT2` in version 2.2): what a file input shows
/// while it plays. It reads only the bytes it is given and trusts no size beyond them; a tag it cannot read
/// (compressed or encrypted frames, a broken size) simply has no title.
package enum ID3Title {
    /// Bytes worth reading from the start of a file: a title comes early in a tag, before any picture.
    package static let readLimit = 256 * 1024

    package static func read(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 else { return nil }
        let version = bytes[3]
        guard (2...4).contains(version), bytes[6...9].allSatisfy({ $0 < 0x80 }) else { return nil }
        let flags = bytes[5]
        let size = synchsafe(bytes[6...9])
        var body = Array(bytes[10..<min(bytes.count, 10 + size)])
        // Unsynchronisation (the whole tag, versions 2.2 and 2.3): every 0xFF 0x00 stands for 0xFF.
        if flags & 0x80 != 0 && version < 4 { body = resynchronised(body) }
        var offset = 0
        if flags & 0x40 != 0 && version >= 3 {
            // An extended header: its size counts itself in 2.4 (synchsafe), not in 2.3.
            guard body.count >= 4 else { return nil }
            let extended = version == 4 ? synchsafe(body[0..<4]) : bigEndian(body[0..<4])
            offset = version == 4 ? extended : extended + 4
        }
        let idLength = version == 2 ? 3 : 4
        let headerLength = version == 2 ? 6 : 10
        let wanted = version == 2 ? Array("TT2".utf8) : Array("TIT2".utf8)
        while offset + headerLength <= body.count {
            let id = Array(body[offset..<offset + idLength])
            guard id.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else { return nil }
            let sizeBytes = body[offset + idLength..<offset + idLength + (version == 2 ? 3 : 4)]
            let frameSize = version == 4 ? synchsafe(sizeBytes) : bigEndian(sizeBytes)
            let dataStart = offset + headerLength
            guard frameSize >= 0, frameSize <= body.count - dataStart else { return nil }
            if id == wanted {
                var data = Array(body[dataStart..<dataStart + frameSize])
                if version >= 3 {
                    let format = body[offset + 9]
                    if version == 3 {
                        guard format & 0xC0 == 0 else { return nil }  // compressed or encrypted
                        if format & 0x20 != 0 { data = Array(data.dropFirst()) }  // a grouping byte
                    } else {
                        guard format & 0x0C == 0 else { return nil }
                        if format & 0x01 != 0 { data = Array(data.dropFirst(4)) }  // a data length
                        if format & 0x02 != 0 { data = resynchronised(data) }
                    }
                }
                return text(data)
            }
            offset = dataStart + frameSize
        }
        return nil
    }

    /// A text frame's first value, by its encoding byte: ISO-8859-1, UTF-16 with a byte order mark, UTF-16BE or
    /// UTF-8; sanitized for a title (no control characters, bounded).
    static func text(_ data: [UInt8]) -> String? {
        guard let encoding = data.first else { return nil }
        let raw = Array(data.dropFirst())
        let decoded: String
        switch encoding {
        case 0:
            let value = raw.prefix { $0 != 0 }
            decoded = String(String.UnicodeScalarView(value.map { Unicode.Scalar($0) }))
        case 1, 2:
            var units: [UInt16] = []
            var index = 0
            while index + 1 < raw.count {
                units.append(UInt16(raw[index]) << 8 | UInt16(raw[index + 1]))
                index += 2
            }
            var bigEndian = true
            if encoding == 1, let first = units.first, first == 0xFFFE || first == 0xFEFF {
                bigEndian = first == 0xFEFF
                units.removeFirst()
            }
            if !bigEndian { units = units.map(\.byteSwapped) }
            decoded = String(decoding: units.prefix { $0 != 0 }, as: UTF16.self)
        case 3:
            decoded = String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        default:
            return nil
        }
        let title = Sanitized.text(decoded, limit: Sanitized.titleLimit)
        return title.isEmpty ? nil : title
    }

    private static func synchsafe(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 7 | Int($1 & 0x7F) }
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    private static func resynchronised(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var previous: UInt8 = 0
        for byte in bytes {
            if !(previous == 0xFF && byte == 0x00) { out.append(byte) }
            previous = byte
        }
        return out
    }
}
