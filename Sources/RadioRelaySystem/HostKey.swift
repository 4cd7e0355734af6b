import Glibc

/// Who counts as one client for `--max-per-ip`: an IPv4 address, or an IPv6 /64 (a home or a host usually gets a
/// whole /64, so counting single IPv6 addresses would let one client open as many connections as it likes). An
/// IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, what a `::` socket reports for an IPv4 client) is its IPv4
/// address. A pure value made from the socket address's bytes: no text is formatted per accept.
package struct HostKey: Hashable, Sendable {
    /// The IPv4 address (host order) or the first 64 bits of the IPv6 address.
    package let bits: UInt64
    package let isIPv4: Bool

    package init(ipv4 address: UInt32) {
        bits = UInt64(address)
        isIPv4 = true
    }

    package init(ipv6Prefix prefix: UInt64) {
        bits = prefix
        isIPv4 = false
    }

    package init(_ address: SocketAddress) {
        var storage = address.storage
        let family = Int32(storage.ss_family)
        self = withUnsafeBytes(of: &storage) { raw -> HostKey in
            if family == AF_INET {
                let offset = MemoryLayout<sockaddr_in>.offset(of: \.sin_addr) ?? 4
                return HostKey(ipv4: UInt32(truncatingIfNeeded: Self.bigEndianWord(raw, at: offset, count: 4)))
            }
            let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr) ?? 8
            let high = Self.bigEndianWord(raw, at: offset, count: 8)
            let middle = Self.bigEndianWord(raw, at: offset + 8, count: 4)
            if high == 0 && middle == 0x0000_FFFF {
                return HostKey(ipv4: UInt32(truncatingIfNeeded: Self.bigEndianWord(raw, at: offset + 12, count: 4)))
            }
            return HostKey(ipv6Prefix: high)
        }
    }

    private static func bigEndianWord(_ raw: UnsafeRawBufferPointer, at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<offset + count { value = value << 8 | UInt64(raw[index]) }
        return value
    }
}
