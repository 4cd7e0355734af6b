import RadioRelaySystem

/// A station's `source_password`: what a live source client sends with user `source` (HTTP Basic, as Icecast's
/// sources do). A secret: it prints as `***`, and is compared in time that does not depend on where a guess differs.
public struct SourcePassword: Sendable, Equatable, CustomStringConvertible {
    fileprivate let bytes: [UInt8]

    /// 8 to 256 visible ASCII characters (no spaces, no colon); nil otherwise.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard (8...256).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x3A })
        else { return nil }
        self.bytes = bytes
    }

    public static let accepts = "8 to 256 visible ASCII characters (no spaces or colons), or @credential:NAME"
    /// The user name a source sends (Icecast's).
    public static let user = "source"

    public var description: String { "***" }

    /// Whether `candidate` is the password, in time that does not depend on where they differ.
    package func matches(_ candidate: some Collection<UInt8>) -> Bool { secretMatches(bytes, candidate) }

    /// What an `Authorization` header says about a source's credentials.
    package enum Check: Equatable, Sendable {
        /// No `Authorization: Basic` at all (libshout asks without first, to learn the server's challenge).
        case missing
        case wrong
        case accepted
    }

    /// Checks `Authorization: Basic base64(source:PASSWORD)`; any other user, scheme or encoding is `wrong`.
    package func check(_ authorization: String?) -> Check {
        guard let authorization else { return .missing }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic", parts[1].utf8.count <= 1024,
            let decoded = Base64.decode(parts[1].utf8.filter { $0 != 0x20 })
        else { return .wrong }
        guard let colon = decoded.firstIndex(of: 0x3A) else { return .wrong }
        let user = decoded[..<colon]
        let password = decoded[decoded.index(after: colon)...]
        // Both compared whatever the first says: the time does not tell which one was wrong.
        let userMatches = user.elementsEqual(Self.user.utf8)
        let passwordMatches = matches(password)
        return userMatches && passwordMatches ? .accepted : .wrong
    }
}

/// Base64 (RFC 4648 §4, padding optional) of untrusted text; nil for anything else.
package enum Base64 {
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text {
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="):
                padding += 1
                guard padding <= 2 else { return nil }
                continue
            default: return nil
            }
            guard padding == 0 else { return nil }  // nothing after padding
            accumulator = (accumulator << 6) | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        return bits >= 6 ? nil : output  // a lone sixth of a byte is no encoding
    }
}
