import RadioRelaySystem

/// The client of an HTTP request that came through a reverse proxy in HTTP mode (nginx, a CDN, HAProxy with
/// `option forwardfor`): named by the proxy in `X-Forwarded-For` or `Forwarded` (RFC 7239), believed only when the
/// connection's peer is one of `[server] forwarded_from`. A pure value (`ForwardedForTests`).
///
/// Each proxy appends the address it got the request from, so the list is read from the right: the rightmost
/// address that is not itself a trusted proxy is the client. Whatever a client writes in the header itself is on
/// the left of what the trusted proxies appended, and is never reached (a chain of trusted proxies is walked
/// through). An entry that is not an address (`unknown`, an obfuscated `_hidden`, garbage) ends the walk: the last
/// trusted hop is the client then, the only address known. Only the configured header is read: a proxy that writes
/// one passes the other through as the client sent it.
package struct ForwardedFor: Sendable, Equatable {
    /// Which header the proxies write.
    package enum Header: String, Sendable, CaseIterable {
        case xForwardedFor = "x-forwarded-for"
        case forwarded
    }

    package var proxies: TrustedProxies
    package var header: Header

    /// The most entries walked from the right: a chain of trusted proxies is never this long.
    package static let maxHops = 32

    package init(proxies: TrustedProxies, header: Header = .xForwardedFor) {
        self.proxies = proxies
        self.header = header
    }

    /// The request's client: `peer` unless it is a trusted proxy that named one.
    /// - Parameter lines: the values of every line of the configured header in the request (`header`'s name,
    ///   lowercase), in order: one list (RFC 9110 §5.3).
    package func client(peer: SocketAddress, lines: [String]) -> SocketAddress {
        guard proxies.trusts(peer) else { return peer }
        var entries: [Substring] = []
        for line in lines {
            entries += line.split(separator: ",", omittingEmptySubsequences: false)
        }
        var client = peer
        for entry in entries.reversed().prefix(Self.maxHops) {
            let text = header == .forwarded ? Self.forParameter(entry) : Substring(entry.trimmingBlanks())
            guard let text, let address = Self.address(text) else { return client }
            client = address
            if !proxies.trusts(address) { return address }
        }
        return client
    }

    /// The `for=` parameter of one element of `Forwarded` (`for=192.0.2.60;proto=http`, `for="[2001:db8::1]:4711"`);
    /// nil when it has none.
    static func forParameter(_ element: Substring) -> Substring? {
        for pair in element.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingBlanks().lowercased() == "for" else { continue }
            var value = Substring(parts[1].trimmingBlanks())
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            return value
        }
        return nil
    }

    /// An address as a header writes it: `192.0.2.60`, `192.0.2.60:4711`, `2001:db8::1`, `[2001:db8::1]:4711`; nil
    /// for anything else (names are never resolved).
    static func address(_ text: Substring) -> SocketAddress? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var host = text
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || Self.isPort(rest) else { return nil }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.firstIndex(of: ":"), host.lastIndex(of: ":") == colon {
            // One colon: an IPv4 address and a port.
            guard Self.isPort(host[colon...]) else { return nil }
            host = host[..<colon]
        }
        return SocketAddress(host: String(host), port: 0)
    }

    /// `:` and 1 to 5 digits.
    private static func isPort(_ text: Substring) -> Bool {
        let digits = text.utf8.dropFirst()
        return text.utf8.first == UInt8(ascii: ":") && (1...5).contains(digits.count)
            && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
