import CLinux
import Foundation
import Glibc
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The Broadcaster under odd clients and crowds, with real sockets on 127.0.0.1 and ::1: dual-stack `::`, per-/64
/// counting, half-closed listeners, the shared listener budget, and a connection storm.
@Suite(.timeLimit(.minutes(1))) struct BroadcasterHardeningTests {
    typealias Rig = BroadcasterTests.Rig

    /// A client on ::1 (ListenerClient is IPv4 only).
    struct IPv6Client: ~Copyable {
        private(set) var fd: Int32

        init(port: UInt16) throws {
            fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw SystemError("socket AF_INET6") }
            let address = try #require(SocketAddress(host: "::1", port: port))
            guard address.withSockaddr({ connect(fd, $0, $1) }) == 0 else {
                let error = SystemError("connect [::1]:\(port)")
                Glibc.close(fd)
                fd = -1  // whether or not deinit runs for a value whose init threw, it must not close again
                throw error
            }
            var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { if fd >= 0 { Glibc.close(fd) } }

        func read(for seconds: Double) -> [UInt8] {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            let deadline = monotonicNow() + seconds
            while monotonicNow() < deadline {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n > 0 { bytes += buffer[0..<n] } else if n == 0 { break }
            }
            return bytes
        }
    }

    /// `--bind ::` takes IPv4 clients too, whatever net.ipv6.bindv6only says: IPV6_V6ONLY is off on the socket.
    @Test func theIPv6WildcardServesIPv4AndIPv6() throws {
        let rig = try Rig {
            $0.bind = "::"
            $0.flushInterval = 0
        }
        defer { rig.stop() }
        var only: Int32 = -1
        var size = socklen_t(MemoryLayout<Int32>.size)
        let fd = try #require(rig.broadcaster.listenFD)
        #expect(getsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &only, &size) == 0)
        #expect(only == 0)
        try rig.publish(seconds: 1)
        let v4 = try ListenerClient(port: rig.port)
        defer { v4.close() }
        let v6 = try IPv6Client(port: rig.port)
        #expect(try LiveCapture(v4.read(for: 0.5).bytes).headerOK)
        #expect(try LiveCapture(v6.read(for: 0.5)).headerOK)
    }

    /// On a `::` socket an IPv4 client arrives as ::ffff:127.0.0.1 and still counts per IPv4 address; ::1 is
    /// another client.
    @Test func maxPerIPCountsMappedIPv4ClientsByAddress() throws {
        let rig = try Rig {
            $0.bind = "::"
            $0.maxPerIP = 1
        }
        defer { rig.stop() }
        try rig.publish(seconds: 1)
        let first = try ListenerClient(port: rig.port)
        defer { first.close() }
        #expect(!first.read(for: 0.3).bytes.isEmpty)
        let second = try ListenerClient(port: rig.port)
        defer { second.close() }
        let refused = second.read(for: 1)
        #expect(refused.closed && refused.bytes.isEmpty)
        let v6 = try IPv6Client(port: rig.port)
        #expect(!v6.read(for: 0.3).isEmpty)
        let counters = rig.broadcaster.counters.snapshot
        #expect(counters.rejected == 1 && counters.listeners == 2)
    }

    /// `nc -N`: a client that sends its request and shuts its side down still gets the stream, valid and whole.
    @Test func aListenerThatHalfClosesKeepsReceiving() throws {
        let rig = try Rig { $0.flushInterval = 0 }
        defer { rig.stop() }
        try rig.publish(seconds: 1)
        let client = try ListenerClient(port: rig.port)
        defer { client.close() }
        client.send("GET / HTTP/1.0\r\n\r\n")
        #expect(shutdown(client.fd, Int32(SHUT_WR)) == 0)
        var received = client.read(for: 0.3)
        for _ in 0..<5 {
            try rig.publish(seconds: 0.2)
            let more = client.read(for: 0.2)
            #expect(!more.closed && !more.bytes.isEmpty)
            received.bytes += more.bytes
        }
        let capture = try LiveCapture(received.bytes)
        #expect(capture.headerOK && capture.sequenceGaps == 0)
        #expect(capture.lastGranule >= Int64(1.9 * 48_000))
        #expect(rig.broadcaster.counters.snapshot.listeners == 1)
    }

    /// The budget shared by all stations (the open-files cap) refuses like `maxListeners` does.
    @Test func theSharedBudgetRefusesListenersBeyondIt() throws {
        let budget = ListenerBudget(limit: 1)
        let rig = try Rig(budget: budget)
        defer { rig.stop() }
        try rig.publish(seconds: 1)
        let first = try ListenerClient(port: rig.port)
        defer { first.close() }
        #expect(!first.read(for: 0.3).bytes.isEmpty)
        let second = try ListenerClient(port: rig.port)
        defer { second.close() }
        #expect(second.read(for: 1).closed)
        #expect(rig.broadcaster.counters.snapshot.rejected == 1)
        #expect(budget.open.load(ordering: .relaxed) == 1)
        // Gone: found at the next write (a closed peer answers with a reset), and its place is free again.
        first.close()
        let deadline = monotonicNow() + 5
        while budget.open.load(ordering: .relaxed) > 0 && monotonicNow() < deadline {
            try rig.publish(seconds: 0.1)
            usleep(100_000)
        }
        #expect(budget.open.load(ordering: .relaxed) == 0)
        let third = try ListenerClient(port: rig.port)
        defer { third.close() }
        #expect(!third.read(for: 0.3).bytes.isEmpty)
    }
}
