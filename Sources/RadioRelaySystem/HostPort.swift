/// A TCP port as the configuration and the command line take it: 1 to 65 535 (`range`); where "any free port" is
/// meant, 0 as well (`rangeOrAnyFree`: tests, an MP3 output reached over HTTP only).
package enum Port {
    package static let range = 1...65_535
    package static let rangeOrAnyFree = 0...65_535
    /// The words error messages use.
    package static let accepts = "1 to 65535"

    /// A decimal port in `range`, digits only (no sign, no space); nil otherwise.
    package static func parse(_ text: some StringProtocol) -> Int? {
        guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let port = Int(text), range.contains(port)
        else { return nil }
        return port
    }
}

/// `HOST:PORT`, with brackets around an IPv6 literal (`[::1]:8080`): the one parser of an authority with a port.
/// The host is given as written (without the brackets), not resolved or checked beyond what every caller needs: not
/// empty, no `/` or `@`; each caller checks it is what it takes (an IP literal, a host name). Without brackets the
/// port is after the last `:` (`::1:8080` is `[::1]:8080`).
package struct HostPort: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT` or `[V6]:PORT`; nil otherwise.
    package init?(parsing text: some StringProtocol) {
        guard let parsed = Self.split(Substring(text)), let portText = parsed.port, let port = Port.parse(portText)
        else { return nil }
        self.init(host: String(parsed.host), port: port)
    }

    /// The host and what follows its `:` (nil: no port was written), for an authority whose port may be left out
    /// (`HOST`, `[V6]`); nil when it is not an authority at all.
    package static func split(_ text: Substring) -> (host: Substring, port: Substring?)? {
        // By bytes, not Characters: a `:` or `]` followed by a combining mark is one Character, and must still count.
        let bytes = text.utf8
        var host = text
        var port: Substring?
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = text[bytes.index(after: bytes.startIndex)..<close]
            let after = text[bytes.index(after: close)...]
            if after.utf8.first == UInt8(ascii: ":") {
                port = after[after.utf8.index(after: after.utf8.startIndex)...]
            } else if !after.isEmpty {
                return nil
            }
        } else if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
            host = text[..<colon]
            port = text[bytes.index(after: colon)...]
        }
        guard !host.isEmpty, !host.utf8.contains(UInt8(ascii: "/")), !host.utf8.contains(UInt8(ascii: "@")) else {
            return nil
        }
        return (host, port)
    }

    /// `HOST:PORT`, brackets around an IPv6 literal.
    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
