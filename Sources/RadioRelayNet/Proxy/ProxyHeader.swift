import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// The PROXY protocol header a load balancer (HAProxy's `send-proxy-v2`, `send-proxy`) puts before a relayed
/// connection's first byte, read as a pure function of the bytes received so far (HAProxy's
/// `doc/proxy-protocol.txt`, versions 1 and 2). It never traps and never looks past the header: a decided result
/// carries the header's exact length, so the caller consumes that much and leaves what follows (an HTTP request) in
/// place.
///
/// - Version 2 (binary): the 12-byte signature, version 2 with the command LOCAL (0) or PROXY (1), the family and
///   transport, a 16-bit length, then the addresses and TLVs (skipped). The whole header fits in 536 bytes, the
///   smallest TCP segment every host must take (the spec's own bound), so a longer one is refused.
/// - Version 1 (text): `PROXY TCP4|TCP6 SRC DST SRCPORT DSTPORT\r\n` or `PROXY UNKNOWN …\r\n`, at most 107 bytes
///   with the CRLF; no leading zeros, single spaces, a bare CR or LF refused.
package enum ProxyHeader {
    /// The longest header of each version, and of either.
    package static let maxV1Length = 107
    package static let maxV2Length = 536
    package static let maxLength = maxV2Length
    package static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    package static let v1Prefix = Array("PROXY ".utf8)
    private static let v1Protocols = [Array("TCP4 ".utf8), Array("TCP6 ".utf8), Array("UNKNOWN".utf8)]

    /// An IPv4 (4 bytes) or IPv6 (16 bytes) address with its port, as the header gives it.
    package struct Endpoint: Equatable, Sendable, CustomStringConvertible {
        package var ip: [UInt8]
        package var port: UInt16

        package init(ip: [UInt8], port: UInt16) {
            self.ip = ip
            self.port = port
        }

        /// As the sockets name it (for `HostKey`, log lines and status).
        package var socketAddress: SocketAddress { SocketAddress(ip: ip, port: port) }

        package var description: String { socketAddress.description }
    }

    package enum Result: Equatable, Sendable {
        /// Not decided yet: every byte so far belongs to a header that may still come right.
        case incomplete
        /// A relayed connection from `source` (the client) to `destination` (the balancer's address); the header
        /// is `length` bytes.
        case proxied(source: Endpoint, destination: Endpoint, length: Int)
        /// A relayed connection whose source is no IP address (v1 `UNKNOWN`; v2 PROXY over the UNSPEC or UNIX
        /// family, or an unspecified transport): the spec says to use the connection's own addresses.
        case unknown(length: Int)
        /// v2 LOCAL: the balancer's own connection (a health check), not relayed.
        case local(length: Int)
        /// Not a PROXY header: the connection must be closed.
        case invalid(String)

        /// The header's length once decided (nil while incomplete or invalid).
        package var length: Int? {
            switch self {
            case .proxied(_, _, let length), .unknown(let length), .local(let length): length
            case .incomplete, .invalid: nil
            }
        }

        package var isInvalid: Bool {
            if case .invalid = self { return true }
            return false
        }
    }

    /// Decides what `bytes` (the connection's first bytes, maybe more than the header) start with.
    package static func parse(_ bytes: some Collection<UInt8>) -> Result {
        let bytes = Array(bytes.prefix(maxLength))
        guard let first = bytes.first else { return .incomplete }
        if first == v2Signature[0] { return parseV2(bytes) }
        if first == v1Prefix[0] { return parseV1(bytes) }
        return .invalid("no PROXY header (first byte \(first))")
    }

    // MARK: Version 2

    private static func parseV2(_ bytes: [UInt8]) -> Result {
        let known = min(bytes.count, v2Signature.count)
        guard bytes[..<known].elementsEqual(v2Signature[..<known]) else { return .invalid("bad v2 signature") }
        guard bytes.count > 12 else { return .incomplete }
        let version = bytes[12] >> 4
        let command = bytes[12] & 0x0F
        guard version == 2 else { return .invalid("v2 signature with version \(version)") }
        guard command <= 1 else { return .invalid("v2 command \(command)") }
        guard bytes.count > 13 else { return .incomplete }
        let family = bytes[13] >> 4
        let transport = bytes[13] & 0x0F
        guard family <= 3, transport <= 2 else { return .invalid("v2 family/transport \(bytes[13])") }
        guard bytes.count >= 16 else { return .incomplete }
        let length = 16 + (Int(bytes[14]) << 8 | Int(bytes[15]))
        guard length <= maxV2Length else { return .invalid("v2 header of \(length) bytes (at most \(maxV2Length))") }
        let needed = [0: 0, 1: 12, 2: 36, 3: 216][Int(family)] ?? 0
        // Checked before the whole header is here, so an impossible length is refused at once.
        guard command == 0 || length - 16 >= needed else {
            return .invalid("v2 family \(family) needs \(needed) address bytes, the header has \(length - 16)")
        }
        guard bytes.count >= length else { return .incomplete }
        guard command == 1 else { return .local(length: length) }
        guard transport != 0, family == 1 || family == 2 else { return .unknown(length: length) }
        let size = family == 1 ? 4 : 16
        let ports = 16 + 2 * size
        return .proxied(
            source: Endpoint(
                ip: Array(bytes[16..<16 + size]), port: UInt16(bytes[ports]) << 8 | UInt16(bytes[ports + 1])),
            destination: Endpoint(
                ip: Array(bytes[16 + size..<ports]), port: UInt16(bytes[ports + 2]) << 8 | UInt16(bytes[ports + 3])),
            length: length)
    }

    // MARK: Version 1

    private static func parseV1(_ bytes: [UInt8]) -> Result {
        let known = min(bytes.count, v1Prefix.count)
        guard bytes[..<known].elementsEqual(v1Prefix[..<known]) else { return .invalid("bad v1 prefix") }
        // The protocol is known before the line ends: refused as soon as it cannot be one.
        let protocolName = bytes.dropFirst(v1Prefix.count)
        guard
            v1Protocols.contains(where: { name in
                let common = min(name.count, protocolName.count)
                return protocolName.prefix(common).elementsEqual(name.prefix(common))
            })
        else { return .invalid("v1 protocol is not TCP4, TCP6 or UNKNOWN") }
        // The line ends at the first CR, which must be followed by LF (a LF alone is refused), and the CRLF must end
        // within the first 107 bytes: the CR at index 105 at the latest.
        let lastCR = maxV1Length - 2
        guard let end = bytes.prefix(lastCR + 1).firstIndex(where: { $0 == 0x0D || $0 == 0x0A }) else {
            return bytes.count > lastCR ? .invalid("v1 line without CRLF in \(maxV1Length) bytes") : .incomplete
        }
        guard bytes[end] == 0x0D else { return .invalid("v1 line ends in a bare LF") }
        guard end + 1 < bytes.count else { return .incomplete }
        guard bytes[end + 1] == 0x0A else { return .invalid("v1 line ends in a bare CR") }
        let length = end + 2
        let line = bytes[v1Prefix.count..<end]
        if line.starts(with: Array("UNKNOWN".utf8)) { return .unknown(length: length) }
        let fields = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard fields.count == 5 else { return .invalid("v1 line with \(fields.count + 1) fields, not 6") }
        let size: Int
        switch String(decoding: fields[0], as: UTF8.self) {
        case "TCP4": size = 4
        case "TCP6": size = 16
        default: return .invalid("v1 protocol is not TCP4, TCP6 or UNKNOWN")
        }
        guard let source = address(fields[1], size: size), let destination = address(fields[2], size: size),
            let sourcePort = port(fields[3]), let destinationPort = port(fields[4])
        else { return .invalid("v1 addresses or ports malformed") }
        return .proxied(
            source: Endpoint(ip: source, port: sourcePort),
            destination: Endpoint(ip: destination, port: destinationPort),
            length: length)
    }

    /// A decimal port 0–65535 without leading zeros.
    private static func port(_ text: ArraySlice<UInt8>) -> UInt16? {
        guard let value = decimal(text, digits: 5), value <= 65535 else { return nil }
        return UInt16(value)
    }

    /// 1 to `digits` decimal digits, no leading zero (but "0").
    private static func decimal(_ text: ArraySlice<UInt8>, digits: Int) -> Int? {
        guard (1...digits).contains(text.count), text.allSatisfy({ (0x30...0x39).contains($0) }),
            text.count == 1 || text.first != 0x30
        else { return nil }
        return text.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// Dotted decimal for IPv4 (exactly four numbers 0–255, no leading zeros); for IPv6 what `inet_pton` reads, of
    /// hex digits, colons and dots only.
    private static func address(_ text: ArraySlice<UInt8>, size: Int) -> [UInt8]? {
        if size == 4 {
            let parts = text.split(separator: 0x2E, omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            var ip: [UInt8] = []
            for part in parts {
                guard let value = decimal(part, digits: 3), value <= 255 else { return nil }
                ip.append(UInt8(value))
            }
            return ip
        }
        let allowed = Set(Array("0123456789abcdefABCDEF:.".utf8))
        guard (2...45).contains(text.count), text.allSatisfy(allowed.contains) else { return nil }
        var ip = [UInt8](repeating: 0, count: 16)
        let parsed = ip.withUnsafeMutableBytes { buffer in
            inet_pton(AF_INET6, String(decoding: text, as: UTF8.self), buffer.baseAddress)
        }
        return parsed == 1 ? ip : nil
    }
}

extension SocketAddress {
    /// An IPv4 (4 bytes) or IPv6 (16 bytes) address and a port; any other length gives the IPv6 unspecified
    /// address.
    package init(ip: [UInt8], port: UInt16) {
        if ip.count == 4 {
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &v4.sin_addr) { $0.copyBytes(from: ip) }
            self.init(copying: v4)
        } else {
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            if ip.count == 16 { withUnsafeMutableBytes(of: &v6.sin6_addr) { $0.copyBytes(from: ip) } }
            self.init(copying: v6)
        }
    }
}
