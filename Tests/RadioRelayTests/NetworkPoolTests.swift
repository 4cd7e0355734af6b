import Foundation
import Glibc
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// A pool of two network loops serving real sockets on 127.0.0.1: one station's listeners spread over both, each
/// gets a whole stream, the station's limits hold across the loops exactly, two stations share the loops, and a
/// station that stops leaves the other served.
@Suite(.timeLimit(.minutes(1))) struct NetworkPoolTests {
    static func listening(_ pool: NetworkPool) -> [Int] { pool.members.map { $0.listeners.load(ordering: .relaxed) } }

    /// A pool of two loops, started (the caller stops it).
    static func twoLoops() throws -> NetworkPool {
        let pool = try NetworkPool(threads: 2, label: "pool-test")
        try pool.start()
        return pool
    }

    @Test func oneStationsListenersSpreadOverTheLoopsAndEachGetsTheStream() throws {
        let pool = try Self.twoLoops()
        defer { pool.stop() }
        let rig = try BroadcasterTests.Rig(pool: pool) { $0.flushInterval = 0 }
        defer { rig.stop() }
        try rig.publish(seconds: 3)
        let clients = try (0..<20).map { _ in try ListenerClient(port: rig.port) }
        defer { for client in clients { client.close() } }
        #expect(waitUntil(5) { rig.broadcaster.counters.listeners.load(ordering: .relaxed) == 20 })
        #expect(Self.listening(pool) == [10, 10], "accepted by one loop, served by both alike")
        #expect(pool.heartbeats.count == 2)
        try rig.publish(seconds: 1)
        for client in clients {
            let capture = try LiveCapture(client.read(for: 0.3).bytes)
            #expect(capture.headerOK)
            #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            #expect(capture.lastGranule >= Int64(3.9 * 48_000))
        }
        // Departures from one loop (arrivals alternate, the first loop first: the even ones went to it): the next
        // arrivals all go to it until the loops are level again. (A closed connection is noticed when a write to
        // it fails: pages keep coming meanwhile.)
        for index in stride(from: 0, to: 16, by: 2) { clients[index].close() }
        #expect(
            try waitUntil(5) {
                try rig.publish(seconds: 0.1)
                return rig.broadcaster.counters.listeners.load(ordering: .relaxed) == 12
            })
        #expect(Self.listening(pool) == [2, 10])
        let more = try (0..<8).map { _ in try ListenerClient(port: rig.port) }
        defer { for client in more { client.close() } }
        #expect(waitUntil(5) { rig.broadcaster.counters.listeners.load(ordering: .relaxed) == 20 })
        #expect(Self.listening(pool) == [10, 10])
    }

    /// A restart under socket activation finds connections waiting in the backlog: the output's home loop accepts
    /// them at once and hands them to the other loops, which must have the output already. Each of 24 waiting
    /// connections gets the stream's headers, over a pool of 8 loops (told in any order, the home first, some were
    /// closed unserved: systemd-check's watchdog check saw 5 to 33 of 100 closed in one run of four).
    @Test func connectionsWaitingBeforeTheStartAreAllServed() throws {
        let pool = try NetworkPool(threads: 8, label: "pool-backlog")
        try pool.start()
        defer { pool.stop() }
        for _ in 0..<3 {
            let listening = try listeningSocket(
                on: try #require(SocketAddress(host: "127.0.0.1", port: 0)), backlog: 64, purpose: "test")
            let port = try SocketAddress.local(of: listening.rawValue).port
            let clients = try (0..<24).map { _ in try ListenerClient(port: port) }
            defer { for client in clients { client.close() } }
            var configuration = BroadcasterConfiguration()
            configuration.bind = "127.0.0.1"
            configuration.port = Int(port)
            let ring = PageRing(capacity: 64)
            ring.setHeaders(try Encoder(EncoderConfiguration()).headerPages)
            let broadcaster = try Broadcaster(
                name: "backlog", configuration: configuration, ring: ring, adoptedSocket: dup(listening.rawValue),
                onUnexpectedExit: ServiceThread.terminateProcess, services: ListenerServices(pool: pool))
            try broadcaster.start()
            defer { broadcaster.stop() }
            for (index, client) in clients.enumerated() {
                // The first four bytes (SO_RCVTIMEO is 200 ms: a connection closed unserved reads 0 at once).
                var head = [UInt8](repeating: 0, count: 4)
                var got = 0
                let deadline = Date().addingTimeInterval(5)
                while got < 4 && Date() < deadline {
                    let n = head.withUnsafeMutableBytes { bytes in
                        bytes.baseAddress.map { recv(client.fd, $0 + got, 4 - got, 0) } ?? -1
                    }
                    if n == 0 { break }
                    if n > 0 { got += n }
                }
                #expect(got == 4 && head == Array("OggS".utf8), "connection \(index): \(got) bytes")
            }
        }
    }

    @Test func theStationsLimitsHoldAcrossLoops() throws {
        let pool = try Self.twoLoops()
        defer { pool.stop() }
        let rig = try BroadcasterTests.Rig(pool: pool) { $0.maxListeners = 15 }
        defer { rig.stop() }
        try rig.publish(seconds: 1)
        let clients = try (0..<20).map { _ in try ListenerClient(port: rig.port) }
        defer { for client in clients { client.close() } }
        let counters = rig.broadcaster.counters
        #expect(waitUntil(5) { counters.connections.load(ordering: .relaxed) == 20 })
        #expect(counters.listeners.load(ordering: .relaxed) == 15)
        #expect(counters.rejected.load(ordering: .relaxed) == 5)
        #expect(counters.listeners.peak == 15)
        #expect(Self.listening(pool).reduce(0, +) == 15)
        #expect(pool.members.map { $0.assigned.load(ordering: .relaxed) }.reduce(0, +) == 15, "refusals give back")

        let perAddress = try BroadcasterTests.Rig(pool: pool) { $0.maxPerIP = 7 }
        defer { perAddress.stop() }
        let same = try (0..<10).map { _ in try ListenerClient(port: perAddress.port) }
        defer { for client in same { client.close() } }
        let other = try ListenerClient(port: perAddress.port, source: "127.0.0.2")
        defer { other.close() }
        #expect(waitUntil(5) { perAddress.broadcaster.counters.connections.load(ordering: .relaxed) == 11 })
        #expect(perAddress.broadcaster.counters.listeners.load(ordering: .relaxed) == 8, "7 from 127.0.0.1, 1 other")
    }

    @Test func stationsShareTheLoopsAndOneThatStopsLeavesTheOtherServed() throws {
        let pool = try Self.twoLoops()
        defer { pool.stop() }
        let first = try BroadcasterTests.Rig(pool: pool) { $0.flushInterval = 0 }
        let second = try BroadcasterTests.Rig(pool: pool) { $0.flushInterval = 0 }
        defer { second.stop() }
        try first.publish(seconds: 2)
        try second.publish(seconds: 2)
        let firsts = try (0..<6).map { _ in try ListenerClient(port: first.port) }
        let seconds = try (0..<6).map { _ in try ListenerClient(port: second.port) }
        defer { for client in firsts + seconds { client.close() } }
        #expect(waitUntil(5) { Self.listening(pool).reduce(0, +) == 12 })
        #expect(Self.listening(pool) == [6, 6])
        first.stop()
        #expect(waitUntil(5) { Self.listening(pool).reduce(0, +) == 6 })
        for client in firsts { #expect(client.read(for: 1).closed, "its station stopped") }
        try second.publish(seconds: 1)
        for client in seconds {
            let capture = try LiveCapture(client.read(for: 0.3).bytes)
            #expect(capture.headerOK && capture.sequenceGaps == 0)
            #expect(capture.lastGranule >= Int64(2.9 * 48_000))
        }
        // Its port is no longer accepted on by any loop.
        let late = try? ListenerClient(port: first.port)
        #expect(late.map { $0.read(for: 0.3).bytes.isEmpty } ?? true)
    }

    @Test func theDefaultNumberOfLoopsFollowsAffinityAndQuota() {
        #expect(NetworkThreads.cores(cpuMax: "max 100000") == nil)
        #expect(NetworkThreads.cores(cpuMax: "200000 100000") == 2)
        #expect(NetworkThreads.cores(cpuMax: "150000 100000") == 2, "1.5 cores' worth: two loops")
        #expect(NetworkThreads.cores(cpuMax: "50000 100000") == 1)
        #expect(NetworkThreads.cores(cpuMax: "-1 100000") == nil)
        #expect(NetworkThreads.cores(cpuMax: "100000 0") == nil)
        #expect(NetworkThreads.cores(cpuMax: "9223372036854775807 1") == nil)
        #expect(NetworkThreads.cores(cpuMax: "") == nil)
        let automatic = NetworkThreads.automatic()
        #expect(automatic >= 1 && automatic <= max(1, Int(ProcessInfo.processInfo.processorCount)))
    }

    @Test func networkThreadsIsAServerKey() throws {
        let station = "[station a]\nupstream = /srv/a.mp3\n"
        #expect(try ConfigFileTests.parse("[server]\nnetwork_threads = 2\n" + station).server.networkThreads == 2)
        #expect(try ConfigFileTests.parse("[server]\nnetwork_threads = auto\n" + station).server.networkThreads == nil)
        #expect(try ConfigFileTests.parse(station).server.networkThreads == nil)
        for bad in ["0", "65", "two"] {
            #expect(
                ConfigFileErrorTests.messages("[server]\nnetwork_threads = \(bad)\n" + station) == [
                    "r.conf:2: network_threads = \(bad): use auto or 1 to 64"
                ])
        }
    }

    @Test func aPoolHasOneToSixtyFourLoops() throws {
        #expect(try NetworkPool(threads: 0).members.count == 1)
        #expect(try NetworkPool(threads: 1_000).members.count == NetworkPool.maxThreads)
    }
}
