import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The bound on a half-open connection (`PeerTimeout`: keep-alive and `TCP_USER_TIMEOUT`), and how a listener's
/// connection closes (`NetworkLoop.closesAbortively`).
@Suite struct PeerTimeoutTests {
    @Test func theTimeoutSetsTheProbesAndTheUserTimeout() {
        let standard = PeerTimeout(seconds: 20)
        #expect(standard.keepAliveIdle == 10)
        #expect(standard.keepAliveInterval == 3)
        #expect(standard.keepAliveCount == 3)
        #expect(standard.userTimeoutMilliseconds == 20_000)
        #expect(standard.bound == 23)
        let shortest = PeerTimeout(seconds: 1)
        #expect(
            shortest.keepAliveIdle == 1 && shortest.keepAliveInterval == 1 && shortest.userTimeoutMilliseconds == 1_000)
        #expect(PeerTimeout(seconds: 300).userTimeoutMilliseconds == 300_000)
        // Out of range (never from the option table, which takes 1 to 300): clamped, never a trap.
        #expect(PeerTimeout(seconds: Int.max).userTimeoutMilliseconds == 2_000_000_000)
        #expect(PeerTimeout(seconds: -1).userTimeoutMilliseconds == 1_000)
        #expect(PeerTimeout(seconds: -1).keepAliveIdle == 1)
        #expect(PeerTimeout(seconds: Int.max).keepAliveIdle == Int32.max)
    }

    @Test func theOptionsReachTheSocket() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        try PeerTimeout(seconds: 12).apply(to: fd)
        func option(_ level: Int32, _ name: Int32) -> Int32 {
            var value: Int32 = -1
            var size = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(fd, level, name, &value, &size) == 0 ? value : -1
        }
        let tcp = Int32(IPPROTO_TCP)
        #expect(option(SOL_SOCKET, SO_KEEPALIVE) == 1)
        #expect(option(tcp, TCP_KEEPIDLE) == 6)
        #expect(option(tcp, TCP_KEEPINTVL) == 2)
        #expect(option(tcp, TCP_KEEPCNT) == 3)
        #expect(option(tcp, TCP_USER_TIMEOUT) == 12_000)
        try setAbortiveClose(fd)
        var linger = linger()
        var size = socklen_t(MemoryLayout<linger>.size)
        #expect(getsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, &size) == 0)
        #expect(linger.l_onoff == 1 && linger.l_linger == 0)
    }

    /// A listener's timeout never cuts under the lag rule: a paused listener (zero window, which Linux also ends
    /// after `TCP_USER_TIMEOUT`) is moved at `max_lag` and dropped at the next crossing, as before.
    @Test func aListenersTimeoutCoversTheLagRule() {
        var listening = BroadcasterConfiguration()
        #expect(listening.listenerPeerTimeout.seconds == 21)
        listening.peerTimeout = 30
        #expect(listening.listenerPeerTimeout.seconds == 30)
        listening.maxLag = 60
        #expect(listening.listenerPeerTimeout.seconds == 121)
        listening.maxLag = 0.5
        listening.peerTimeout = 5
        #expect(listening.listenerPeerTimeout.seconds == 5)
        listening.maxLag = .infinity
        #expect(listening.listenerPeerTimeout.seconds == 5)
        listening.maxLag = .nan
        #expect(listening.listenerPeerTimeout.seconds == 5)
    }

    /// A backed-up listener that made no progress for 2 s (a dead path, a reader that stopped) is reset; one that
    /// still reads, or holds nothing unsent, gets a FIN after its last bytes.
    @Test func aStuckListenerClosesWithAReset() {
        #expect(NetworkLoop.closesAbortively(backedUp: true, sinceProgress: 2))
        #expect(NetworkLoop.closesAbortively(backedUp: true, sinceProgress: 600))
        #expect(NetworkLoop.closesAbortively(backedUp: true, sinceProgress: .nan), "an unknown time is no progress")
        #expect(!NetworkLoop.closesAbortively(backedUp: true, sinceProgress: 1.9))
        #expect(!NetworkLoop.closesAbortively(backedUp: false, sinceProgress: 600))
    }

    @Test func peerTimeoutIsAStationOptionAppliedInPlace() throws {
        let option = try #require(OptionSpecification.serve.first { $0.name == "peer-timeout" })
        #expect(option.key == "peer_timeout")
        #expect(option.reload == .inPlace)
        var station = StationConfiguration()
        #expect(station.peerTimeout == 20)
        station.peerTimeout = 7
        #expect(station.outputSettings.allSatisfy { $0.broadcaster.peerTimeout == 7 })
        station.peerTimeout = 0
        #expect(throws: ConfigurationError.self) { try station.validate() }
        station.peerTimeout = 301
        #expect(throws: ConfigurationError.self) { try station.validate() }
    }
}

extension BroadcasterTests {
    /// A listener that stopped reading is dropped by the lag rule with a RST: the bytes the kernel still held for it
    /// are thrown away at once instead of being left to a FIN-WAIT-1 socket that retransmits them to a dead path.
    /// The client's next read is ECONNRESET (a graceful close would end in EOF after what it was sent). A slow
    /// listener that still reads is dropped gracefully (`slowListenersAreMovedThenDropped`).
    @Test func aStuckListenerIsDroppedWithAReset() throws {
        let rig = try Rig {
            $0.maxLag = 1.5
            $0.flushInterval = 0
            $0.sendBuffer = 4096
        }
        defer { rig.stop() }
        try rig.publish(seconds: 0.5)
        let stuck = try ListenerClient(port: rig.port, receiveBuffer: 4096)
        defer { stuck.close() }
        let start = Date()
        var published = 0
        while rig.broadcaster.counters.snapshot.droppedSlow == 0 && published < 100 {
            published += 1
            try rig.publish(seconds: 0.1)
            let due = Double(published) * 0.1 - Date().timeIntervalSince(start)
            if due > 0 { usleep(UInt32(due * 1_000_000)) }
        }
        try #require(rig.broadcaster.counters.snapshot.droppedSlow == 1, "never dropped in \(published / 10) s")
        let ending = stuck.ending(within: 5)
        #expect(ending == ECONNRESET, "the connection ended with \(endingName(ending))")
    }
}
