import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// An IPv4 or IPv6 network in CIDR notation (`10.0.0.0/8`, `::1`, `2001:db8::/32`; a bare address is one host).
/// Kept as 128 bits, an IPv4 network as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`, 96 + its prefix bits), so
/// that one comparison serves both families and an IPv4 client seen on a `::` socket matches its IPv4 network.
package struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    package let high: UInt64
    package let low: UInt64
    /// Prefix length over the 128 bits (an IPv4 /8 is 104).
    package let bits: Int
    package let description: String

    /// Parses `ADDR` or `ADDR/BITS` (0–32 for IPv4, 0–128 for IPv6; `[::1]` brackets allowed); nil otherwise. Host
    /// bits set below the prefix (`10.1.2.3/8`) are refused: such a line is more likely a typo than an intent.
    package init?(_ text: String) {
        var address = Substring(text)
        var prefix: Int?
        if let slash = text.firstIndex(of: "/") {
            address = text[..<slash]
            let digits = text[text.index(after: slash)...]
            guard (1...3).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(digits)
            else {
                return nil
            }
            prefix = value
        }
        if address.hasPrefix("[") && address.hasSuffix("]") { address = address.dropFirst().dropLast() }
        guard let (high, low, isIPv4) = Self.bits(of: String(address)) else { return nil }
        let width = isIPv4 ? 32 : 128
        let length = prefix ?? width
        guard (0...width).contains(length) else { return nil }
        let bits = length + (isIPv4 ? 96 : 0)
        let (maskHigh, maskLow) = Self.mask(bits)
        guard high & ~maskHigh == 0, low & ~maskLow == 0 else { return nil }
        self.high = high
        self.low = low
        self.bits = bits
        description = prefix == nil ? String(address) : "\(address)/\(length)"
    }

    /// Whether the address (of either family) is in the network.
    package func contains(_ address: SocketAddress) -> Bool {
        guard let (high, low) = Self.bits(of: address) else { return false }
        let (maskHigh, maskLow) = Self.mask(bits)
        return high & maskHigh == self.high && low & maskLow == self.low
    }

    /// The top `bits` of 128 set, as two words.
    package static func mask(_ bits: Int) -> (UInt64, UInt64) {
        let high: UInt64 = bits >= 64 ? .max : (bits == 0 ? 0 : .max << UInt64(64 - bits))
        let low: UInt64 = bits <= 64 ? 0 : (bits == 128 ? .max : .max << UInt64(128 - bits))
        return (high, low)
    }

    /// An IP literal's 128 bits (IPv4 mapped) and its family; nil for anything else (names are never resolved).
    private static func bits(of text: String) -> (UInt64, UInt64, Bool)? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return (0, 0x0000_FFFF_0000_0000 | UInt64(UInt32(bigEndian: v4.s_addr)), true)
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let words = withUnsafeBytes(of: &v6) { Self.words($0, at: 0) }
        return (words.0, words.1, false)
    }

    /// A socket address's 128 bits, an IPv4 one mapped; nil for another family.
    package static func bits(of address: SocketAddress) -> (UInt64, UInt64)? {
        var storage = address.storage
        return withUnsafeBytes(of: &storage) { raw -> (UInt64, UInt64)? in
            switch address.family {
            case AF_INET:
                let offset = MemoryLayout<sockaddr_in>.offset(of: \.sin_addr) ?? 4
                var value: UInt64 = 0
                for index in 0..<4 { value = value << 8 | UInt64(raw[offset + index]) }
                return (0, 0x0000_FFFF_0000_0000 | value)
            case AF_INET6:
                return words(raw, at: MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr) ?? 8)
            default:
                return nil
            }
        }
    }

    /// 16 bytes at `offset`, big-endian, as two words.
    private static func words(_ raw: UnsafeRawBufferPointer, at offset: Int) -> (UInt64, UInt64) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 {
            high = high << 8 | UInt64(raw[offset + index])
            low = low << 8 | UInt64(raw[offset + 8 + index])
        }
        return (high, low)
    }
}

/// The peers whose PROXY header is believed (`proxy_from`, `http_proxy_from`, `--proxy-from`): the load balancers.
/// A connection from any other address on a port that expects the header is closed and counted, whatever it sends:
/// otherwise anyone who reaches the port could claim any address, and with it the per-address limit and the access
/// log. Without the setting only loopback is trusted (a balancer on the same machine), which is what edges with a
/// local HAProxy have always had.
package struct TrustedProxies: Sendable, Equatable, CustomStringConvertible {
    package var ranges: [AddressRange]

    package init(_ ranges: [AddressRange]) { self.ranges = ranges }

    /// 127.0.0.0/8 and ::1: the default.
    package static let loopback = TrustedProxies(
        [AddressRange("127.0.0.0/8"), AddressRange("::1")].compactMap { $0 })

    /// A comma-separated list of `ADDR[/BITS]`; nil if any item is not one, or the list is empty.
    package init?(parsing text: String) {
        let items = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingBlanks() }
        guard !items.isEmpty, items.count <= 256 else { return nil }
        var ranges: [AddressRange] = []
        for item in items {
            guard let range = AddressRange(item) else { return nil }
            ranges.append(range)
        }
        self.init(ranges)
    }

    package func trusts(_ address: SocketAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    package var description: String { ranges.map(\.description).joined(separator: ", ") }

    /// What the setting accepts, for messages.
    package static let accepts = "IP addresses or networks, comma-separated, e.g. 127.0.0.1, 10.0.0.0/8, ::1"
}
