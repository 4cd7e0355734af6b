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
        // By bytes, not Characters: a `,` followed by a combining mark is one Character, and must still separate.
        var entries: [Substring] = []
        for line in lines {
            entries += line.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map(
                Substring.init)
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
    /// nil when it has none. By bytes, as the list is split.
    static func forParameter(_ element: Substring) -> Substring? {
        for pair in element.utf8.split(separator: UInt8(ascii: ";")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1)
            guard parts.count == 2, Substring(parts[0]).trimmingBlanks().lowercased() == "for" else { continue }
            let value = Substring(Substring(parts[1]).trimmingBlanks())
            let quote = UInt8(ascii: "\"")
            let bytes = value.utf8
            if bytes.count >= 2, bytes.first == quote, bytes.last == quote {
                return Substring(bytes.dropFirst().dropLast())
            }
            return value
        }
        return nil
    }

    /// An address as a header writes it: `192.0.2.60`, `2001:db8::1`, or either with a port as an authority has it
    /// (`192.0.2.60:4711`, `[2001:db8::1]:4711`, `HostPort.split`); nil for anything else (names are never
    /// resolved).
    static func address(_ text: Substring) -> SocketAddress? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if let plain = SocketAddress(host: String(text), port: 0) { return plain }
        guard let (host, port) = HostPort.split(text), port.map({ Port.parse($0) != nil }) ?? true else { return nil }
        return SocketAddress(host: String(host), port: 0)
    }
}
