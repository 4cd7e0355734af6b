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

/// A listening socket systemd passed (socket activation), owned from here on and made non-blocking, or else one bound
/// and listening on `address` now: the one way every listener of the server gets its socket.
/// - Parameter adopted: the passed descriptor, if any; it is owned (and closed on a failure) from the call on.
package func listeningSocket(
    adopting adopted: Int32?, orBinding address: @autoclosure () throws -> SocketAddress, backlog: Int32,
    purpose: String
) throws -> FileDescriptor {
    guard let adopted else { return try listeningSocket(on: try address(), backlog: backlog, purpose: purpose) }
    guard adopted >= 0 else { throw SystemError("adopting socket \(adopted)\(purpose)", errno: EBADF) }
    let socket = FileDescriptor(owning: adopted)
    try setNonblocking(socket.rawValue)
    return socket
}
