import RadioRelayMedia
import RadioRelaySystem

/// The address listeners reach the HTTP front end at, when it is not what they asked for (`[server] public_url`, a
/// relay behind the HTTPS front): `https://radio.example.org`, or with a path prefix. Only a scheme, an authority
/// (a host name or address, a port) and a path: no user, no query.
public struct PublicURL: Sendable, Equatable, CustomStringConvertible {
    /// `https://radio.example.org` or `https://example.org/radio`: no trailing slash.
    public let base: String

    public init?(_ text: String) {
        let lower = text.lowercased()
        let scheme = lower.hasPrefix("https://") ? 8 : lower.hasPrefix("http://") ? 7 : 0
        guard scheme > 0, text.utf8.count <= 256 else { return nil }
        var rest = Substring(text.dropFirst(scheme))
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        let authority = rest.prefix { $0 != "/" }
        guard !authority.isEmpty, IcecastStatus.host(String(authority)) != nil,
            rest.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }),
            !rest.contains("@"), !rest.contains("\\"), !rest.contains("\"")
        else { return nil }
        base = String(text.prefix(scheme)).lowercased() + rest
    }

    public static let accepts = "http:// or https://, a host (and port), and a path if any: https://radio.example.org"
    public var description: String { base }
}
