/// The one redaction of secrets in URLs, for everything a person or a program outside the process can read: log
/// lines, error texts, `/status.json`, metric labels, `check-config` messages.
///
/// Every URL in a text (`scheme://…`, any scheme, up to a blank or a quote) loses its userinfo
/// (`http://user:password@host/` → `http://***@host/`) and the values of its query (`?token=T0ken&a=` →
/// `?token=***&a=`): an upstream's password and an access token in its query string are both secrets. Paths, host
/// names, ports and fragments stay, so the message still says where. Text that holds no `://` comes back unchanged.
///
/// Values that hold secrets are kept in `SecretURL`, whose `description` is this redaction: interpolating one into a
/// message cannot leak it; only the code that hands the URL to libcurl or to a socket reads `raw`.
package enum Redaction {
    package static let mask = "***"

    /// `text` with every URL in it redacted.
    package static func text(_ text: String) -> String {
        // Most texts (every log line passes here) hold no URL: they cost one scan, no copy.
        guard text.utf8.contains(UInt8(ascii: ":")), text.contains("://") else { return text }
        let bytes = Array(text.utf8)
        guard let first = separator(in: bytes, from: 0) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var copied = 0
        var search: Int? = first
        while let colon = search {
            let authorityStart = colon + 3
            let end = bytes[authorityStart...].firstIndex(where: endsURL) ?? bytes.count
            out += bytes[copied..<authorityStart]
            out += redactedRest(bytes[authorityStart..<end])
            copied = end
            search = separator(in: bytes, from: end)
        }
        out += bytes[copied...]
        return String(decoding: out, as: UTF8.self)
    }

    /// The index of the `:` of the next `://` at or after `start` that follows a scheme letter.
    private static func separator(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 3 <= bytes.count {
            if bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/")
                && bytes[index + 2] == UInt8(ascii: "/") && index > 0 && isSchemeByte(bytes[index - 1])
            {
                return index
            }
            index += 1
        }
        return nil
    }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    /// A URL ends at a blank, a control character, a quote or an angle bracket (how URLs sit in messages).
    private static func endsURL(_ byte: UInt8) -> Bool {
        byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
            || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "`")
    }

    /// Authority, path, query and fragment of one URL, redacted.
    private static func redactedRest(_ rest: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        let authorityEnd =
            rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? rest.endIndex
        if let at = rest[rest.startIndex..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) {
            out += Array(mask.utf8)
            out += rest[at..<authorityEnd]
        } else {
            out += rest[rest.startIndex..<authorityEnd]
        }
        let fragment = rest[authorityEnd...].firstIndex(of: UInt8(ascii: "#")) ?? rest.endIndex
        guard let question = rest[authorityEnd..<fragment].firstIndex(of: UInt8(ascii: "?")) else {
            return out + rest[authorityEnd...]
        }
        out += rest[authorityEnd...question]
        var first = true
        for field in rest[(question + 1)..<fragment].split(
            separator: UInt8(ascii: "&"), omittingEmptySubsequences: false)
        {
            if !first { out.append(UInt8(ascii: "&")) }
            first = false
            if let equals = field.firstIndex(of: UInt8(ascii: "=")) {
                out += field[field.startIndex...equals]
                if equals + 1 < field.endIndex { out += Array(mask.utf8) }
            } else if !field.isEmpty {
                out += Array(mask.utf8)  // a bare value may be a token itself
            }
        }
        return out + rest[fragment...]
    }
}

/// A URL that may carry secrets (userinfo, query tokens): shown only redacted (`Redaction`), read raw only where a
/// connection is made.
public struct SecretURL: CustomStringConvertible, Equatable, Hashable, Sendable {
    /// The URL as configured, for libcurl or a socket: never for a message.
    public let raw: String

    public init(_ raw: String) { self.raw = raw }

    public var description: String { Redaction.text(raw) }
}
