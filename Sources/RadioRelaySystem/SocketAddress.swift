import Glibc

/// An IPv4 or IPv6 socket address, for binding and for naming peers in logs.
package struct SocketAddress: Sendable, CustomStringConvertible {
    package var storage = sockaddr_storage()
    package var length: socklen_t = 0

    /// Parses an IPv4 or IPv6 literal (no names, no brackets); nil for anything else.
    package init?(host: String, port: UInt16) {
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            self.init(copying: v4)
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            self.init(copying: v6)
        } else {
            return nil
        }
    }

    /// The address a socket is bound to (`getsockname`), nil when the call fails.
    package init?(localOf fd: Int32) {
        guard let address = try? Self.local(of: fd) else { return nil }
        self = address
    }

    /// The address a socket is bound to (`getsockname`), or the call's error with its errno.
    package static func local(of fd: Int32) throws(SystemError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try syscall("getsockname") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
        }
        return SocketAddress(storage: storage, length: length)
    }

    package init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    package init<Address>(copying address: Address) {
        withUnsafeBytes(of: address) { source in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
        }
        length = socklen_t(MemoryLayout<Address>.size)
    }

    /// Calls `body` with the address as the C socket calls take it (`bind`, `connect`).
    package func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        var copy = storage
        return try withUnsafePointer(to: &copy) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, length) }
        }
    }

    /// 127.0.0.0/8 or ::1.
    package var isLoopback: Bool {
        if family == AF_INET { return host.hasPrefix("127.") }
        return host == "::1"
    }

    /// In 198.18.0.0/15, the range set aside for benchmark networks (RFC 2544): the network namespaces the tests
    /// and benches build, never a real host.
    package var isBenchmarkNetwork: Bool {
        guard family == AF_INET else { return false }
        let parts = host.split(separator: ".")
        return parts.count == 4 && parts[0] == "198" && (parts[1] == "18" || parts[1] == "19")
    }

    package var family: Int32 { Int32(storage.ss_family) }

    /// The address without the port.
    package var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer -> String in
            if family == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    var a = v4.pointee.sin_addr
                    inet_ntop(AF_INET, &a, &text, socklen_t(text.count))
                    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                var a = v6.pointee.sin6_addr
                inet_ntop(AF_INET6, &a, &text, socklen_t(text.count))
                return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
    }

    package var port: UInt16 {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            if family == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin_port)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                UInt16(bigEndian: $0.pointee.sin6_port)
            }
        }
    }

    package var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
