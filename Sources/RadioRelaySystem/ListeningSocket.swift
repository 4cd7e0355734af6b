import Glibc

/// A non-blocking, close-on-exec TCP socket listening on `address`: what every station and the status endpoint
/// bind. `SO_REUSEADDR` (a restart does not wait out TIME_WAIT), and on IPv6 `IPV6_V6ONLY` off, so `::` serves IPv4
/// too (as `::ffff:a.b.c.d`) whatever `net.ipv6.bindv6only` says. `purpose` names it in errors.
package func listeningSocket(on address: SocketAddress, backlog: Int32, purpose: String) throws -> FileDescriptor {
    let socket = try FileDescriptor.opening("socket") {
        Glibc.socket(
            address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0)
    }
    try setSocketOption(socket.rawValue, SOL_SOCKET, SO_REUSEADDR, 1, name: "SO_REUSEADDR")
    if address.family == AF_INET6 {
        try setSocketOption(socket.rawValue, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0, name: "IPV6_V6ONLY")
    }
    _ = try syscall("bind \(address)\(purpose)") { address.withSockaddr { bind(socket.rawValue, $0, $1) } }
    _ = try syscall("listen \(address)\(purpose)") { Glibc.listen(socket.rawValue, backlog) }
    return socket
}
