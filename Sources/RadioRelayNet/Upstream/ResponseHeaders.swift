import RadioRelayMedia
import RadioRelaySystem

/// An upstream's HTTP response headers, fed one line at a time as libcurl's header callback hands them over
/// (`CURLOPT_HEADERFUNCTION`: one line per call, terminator included, for every response of a transfer in turn:
/// redirects, a 100 Continue, then the final one).
///
/// - A status line (`HTTP/…`, or SHOUTcast v1's `ICY …`) starts a new response: the headers kept so far are
///   forgotten, so after redirects only the final response's remain.
/// - A header line is `name: value`. The name must be a token (RFC 9110 §5.6.2), optionally followed by spaces or
///   tabs before the colon; it is lowercased. The value is trimmed of spaces, tabs, CR and LF, and decoded as UTF-8,
///   or as Windows-1252 when it is not valid UTF-8 (SHOUTcast servers send station names that way). A later header of
///   the same name replaces an earlier one. The value is kept as sent: whoever shows it uses `Sanitized.text`.
/// - Any other non-empty line (no colon, an empty or non-token name, a folded continuation line) is ignored and
///   counted in `malformed`.
/// - Bounded: per response at most `maxLines` header lines and `maxBytes` of names and values (UTF-8) are kept; the
///   lines beyond are ignored and counted in `ignored`. Whatever a server sends, this is all the relay holds.
///
/// A pure value that takes any bytes; `Sources/HeaderFuzz` fuzzes it.
package struct ResponseHeaders: Equatable, Sendable {
    package static let maxLines = 100
    package static let maxBytes = 64 * 1024

    /// The current response's headers, names lowercased.
    package private(set) var fields: [String: String] = [:]
    /// Header lines and bytes (name + value, UTF-8) kept for the current response.
    package private(set) var keptLines = 0
    package private(set) var keptBytes = 0
    /// Header lines of the current response ignored because the bounds were reached.
    package private(set) var ignored = 0
    /// Lines of the current response that were neither a header nor empty.
    package private(set) var malformed = 0
    /// Status lines seen: the responses of this transfer.
    package private(set) var responses = 0

    package init() {}

    private init(responses: Int) { self.responses = responses }

    package subscript(name: String) -> String? { fields[name] }

    /// Takes one line, with or without its CR LF.
    package mutating func take(_ line: UnsafeRawBufferPointer) {
        var end = line.count
        while end > 0, Self.isSpace(line[end - 1]) { end -= 1 }
        guard end > 0 else { return }  // the empty line that ends a response's headers
        let content = UnsafeRawBufferPointer(rebasing: line[..<end])
        if Self.starts(content, with: "HTTP/") || Self.starts(content, with: "ICY ") {
            self = ResponseHeaders(responses: responses + 1)
            return
        }
        guard let colon = line[..<end].firstIndex(of: UInt8(ascii: ":")) else {
            malformed += 1
            return
        }
        var nameEnd = colon
        while nameEnd > 0, line[nameEnd - 1] == 0x20 || line[nameEnd - 1] == 0x09 { nameEnd -= 1 }
        guard nameEnd > 0, line[..<nameEnd].allSatisfy(Self.isToken) else {
            malformed += 1
            return
        }
        var valueStart = colon + 1
        while valueStart < end, Self.isSpace(line[valueStart]) { valueStart += 1 }
        // Decoding never makes the text shorter, so a line whose raw bytes do not fit is not decoded at all.
        guard keptLines < Self.maxLines, keptBytes + nameEnd + end - valueStart <= Self.maxBytes else {
            ignored += 1
            return
        }
        let name = String(decoding: line[..<nameEnd].map(Self.lowercased), as: UTF8.self)
        let value = ICYDemuxer.decodeText(Array(line[valueStart..<end]))
        let size = name.utf8.count + value.utf8.count
        guard keptBytes + size <= Self.maxBytes else {
            ignored += 1
            return
        }
        keptLines += 1
        keptBytes += size
        fields[name] = value
    }

    package mutating func take(_ line: String) {
        var line = line
        line.withUTF8 { take(UnsafeRawBufferPointer($0)) }
    }

    /// Why a header's value cannot be used; `message` names the header and its (sanitized, shortened) value.
    package struct InvalidValue: Error, Equatable {
        package let message: String
    }

    /// The ICY metadata interval this response announced (`icy-metaint`), nil when it announced none.
    package func icyMetaInterval() throws(InvalidValue) -> Int? {
        try Self.icyMetaInterval(fields["icy-metaint"])
    }

    /// `text` as an `icy-metaint`: a whole number from 1 to 65 535, else an error naming the value, because demuxing
    /// with it would put metadata into the audio or audio into the metadata.
    package static func icyMetaInterval(_ text: String?) throws(InvalidValue) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text.trimmingWhitespace()), (1...65_535).contains(value) else {
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            throw InvalidValue(
                message: "icy-metaint \"\(Sanitized.text(shown))\" is not a whole number from 1 to 65535")
        }
        return value
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    /// RFC 9110 tchar: letters, digits and !#$%&'*+-.^_`|~
    package static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E...0x60, 0x7C, 0x7E: true
        default: false
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
    }

    private static func starts(_ line: UnsafeRawBufferPointer, with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard line.count >= count else { return false }
        for i in 0..<count where line[i] != prefix.utf8Start[i] { return false }
        return true
    }
}
