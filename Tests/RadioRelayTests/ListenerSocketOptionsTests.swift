import CLinux
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelayNet
@testable import RadioRelaySystem

/// What a raw listener's join relies on: the kernel copies the listener socket options from the listening socket to
/// each connection accepted on it, so they are set once per station instead of seven times per join.
@Suite struct ListenerSocketOptionsTests {
    static func option(_ fd: Int32, _ level: Int32, _ name: Int32) -> Int32 {
        var value: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, level, name, &value, &length) == 0 else { return -2 }
        return value
    }

    static func options(_ fd: Int32) -> [Int32] {
        [
            option(fd, Int32(IPPROTO_TCP), TCP_NODELAY), option(fd, SOL_SOCKET, SO_SNDBUF),
            option(fd, SOL_SOCKET, SO_KEEPALIVE), option(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE),
            option(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL), option(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT),
            option(fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT),
        ]
    }

    @Test func aConnectionAcceptedOnTheListeningSocketInheritsThem() throws {
        let address = try #require(SocketAddress(host: "127.0.0.1", port: 0))
        let listening = try listeningSocket(on: address, backlog: 16, purpose: "test")
        let port = try SocketAddress.local(of: listening.rawValue).port
        var configuration = BroadcasterConfiguration()
        configuration.peerTimeout = 37
        configuration.sendBuffer = 48 * 1024
        let wanted = configuration.listenerSocketOptions
        // A fresh connection's defaults differ from what a station sets: the test would see a missed copy.
        let plain = try ListenerClient(port: port)
        defer { plain.close() }
        var peer = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        // The client's blocking connect returned: on loopback its handshake is done and it waits in the queue.
        func accepted() throws -> FileDescriptor {
            let fd = rr_accept4(listening.rawValue, &peer, &length)
            guard fd >= 0 else { throw SystemError("accept") }
            return FileDescriptor(owning: fd)
        }
        let before = try accepted()
        let defaults = Self.options(before.rawValue)
        try wanted.apply(to: listening.rawValue)
        let set = Self.options(listening.rawValue)
        #expect(set != defaults, "the options a station sets are not the kernel's defaults")
        let client = try ListenerClient(port: port)
        defer { client.close() }
        let after = try accepted()
        #expect(Self.options(after.rawValue) == set, "a connection accepted after the options were set has them all")
        #expect(set[0] == 1 && set[2] == 1 && set[3] == wanted.peerTimeout.keepAliveIdle)
        #expect(set[6] == wanted.peerTimeout.userTimeoutMilliseconds)
    }
}
