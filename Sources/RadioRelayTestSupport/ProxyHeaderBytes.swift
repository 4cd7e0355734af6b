import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// PROXY protocol headers as a load balancer sends them (HAProxy's `doc/proxy-protocol.txt`), for the tests and the
/// fuzz target: an independent writer to check `ProxyHeader.parse` against.
package enum ProxyHeaderBytes {
    /// A v2 header: PROXY (or LOCAL) over TCP with the endpoints' family (both must be of one family), or any
    /// family/transport byte with `addressBlock` as given; `tlvs` follow the addresses.
    package static func v2(
        source: ProxyHeader.Endpoint, destination: ProxyHeader.Endpoint, local: Bool = false, tlvs: [UInt8] = []
    ) -> [UInt8] {
        let block = source.ip + destination.ip + bigEndian(source.port) + bigEndian(destination.port)
        return v2(command: local ? 0 : 1, family: source.ip.count == 4 ? 0x11 : 0x21, addressBlock: block + tlvs)
    }

    package static func v2(command: UInt8, family: UInt8, addressBlock: [UInt8]) -> [UInt8] {
        ProxyHeader.v2Signature + [0x20 | command, family] + bigEndian(UInt16(clamping: addressBlock.count))
            + addressBlock
    }

    /// HAProxy's health-check header: LOCAL, family UNSPEC, no address.
    package static let v2Local = v2(command: 0, family: 0, addressBlock: [])

    /// A v1 line: `PROXY TCP4|TCP6 SRC DST SRCPORT DSTPORT\r\n`, addresses as `inet_ntop` writes them.
    package static func v1(source: ProxyHeader.Endpoint, destination: ProxyHeader.Endpoint) -> [UInt8] {
        let family = source.ip.count == 4 ? "TCP4" : "TCP6"
        let line = "PROXY \(family) \(text(source.ip)) \(text(destination.ip)) \(source.port) \(destination.port)\r\n"
        return Array(line.utf8)
    }

    /// An endpoint from an IP literal.
    package static func endpoint(_ host: String, _ port: UInt16) -> ProxyHeader.Endpoint {
        var bytes = [UInt8](repeating: 0, count: 16)
        if bytes.withUnsafeMutableBytes({ inet_pton(AF_INET, host, $0.baseAddress) }) == 1 {
            return ProxyHeader.Endpoint(ip: Array(bytes.prefix(4)), port: port)
        }
        _ = bytes.withUnsafeMutableBytes { inet_pton(AF_INET6, host, $0.baseAddress) }
        return ProxyHeader.Endpoint(ip: bytes, port: port)
    }

    private static func bigEndian(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    private static func text(_ ip: [UInt8]) -> String {
        var out = [CChar](repeating: 0, count: 64)
        _ = ip.withUnsafeBytes { inet_ntop(ip.count == 4 ? AF_INET : AF_INET6, $0.baseAddress, &out, 64) }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
