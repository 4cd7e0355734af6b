import Foundation
import Glibc
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `moveclients` in the pool (under ThreadSanitizer in CI with the rest of the suite): the listeners of one station,
/// spread over both loops, move to another station's output on the loop that serves each, and each goes on in its own
/// Ogg stream — one serial, no sequence gap, granules going on — with the other station's audio.
extension NetworkPoolTests {
    @Test func listenersMoveToAnotherStationInTheirOwnStream() throws {
        let pool = try Self.twoLoops()
        defer { pool.stop() }
        let first = try BroadcasterTests.Rig(pool: pool) { $0.flushInterval = 0 }
        let second = try BroadcasterTests.Rig(pool: pool) { $0.flushInterval = 0 }
        defer {
            first.stop()
            second.stop()
        }
        try first.publish(seconds: 2)
        try second.publish(seconds: 3)
        let clients = try (0..<8).map { _ in try ListenerClient(port: first.port) }
        defer { for client in clients { client.close() } }
        let listeners = { (rig: BroadcasterTests.Rig) in rig.broadcaster.counters.listeners.load(ordering: .relaxed) }
        #expect(waitUntil(5) { listeners(first) == 8 })
        var received = clients.map { $0.read(for: 0.3).bytes }
        let ticket = CommandTicket(.moveListeners(from: "/a", to: "/b", id: nil))
        let tally = MoveTally(ticket: ticket, loops: pool.members.count, from: "/a", to: "/b", id: nil)
        #expect(first.broadcaster.move(to: second.broadcaster, id: nil, tally: tally))
        #expect(waitUntil(5) { ticket.outcome != nil })
        #expect(ticket.outcome == .done("Clients moved from /a to /b"))
        #expect(tally.snapshot.moved == 8 && listeners(first) == 0 && listeners(second) == 8)
        #expect(Self.listening(pool) == [4, 4], "each stayed on its loop")
        try second.publish(seconds: 1)
        try first.publish(seconds: 1)
        for (index, client) in clients.enumerated() {
            received[index] += client.read(for: 0.3).bytes
            var reader = OggPageReader()
            reader.append(received[index])
            var serials = Set<UInt32>()
            while let page = try reader.next() { serials.insert(page.header.serial) }
            try #require(serials.count == 1, "listener \(index): serials \(serials)")
            let capture = try LiveCapture(received[index])
            #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            // Its 2 s (a burst and what came), then the second station's second that came after the move.
            #expect(capture.lastGranule >= Int64(2.9 * 48_000), "listener \(index): \(capture.lastGranule)")
        }
        // Moving them back one by one: by ID, as the admin's `id=` does.
        let ids = second.broadcaster.admission.roster.list(mount: "/test", limit: 10).map(\.id)
        #expect(ids.count == 8)
        let back = CommandTicket(.moveListeners(from: "/b", to: "/a", id: ids[0]))
        let one = MoveTally(ticket: back, loops: pool.members.count, from: "/b", to: "/a", id: ids[0])
        #expect(second.broadcaster.move(to: first.broadcaster, id: ids[0], tally: one))
        #expect(waitUntil(5) { back.outcome != nil })
        #expect(back.outcome == .done("Client \(ids[0]) moved from /b to /a"))
        #expect(listeners(first) == 1 && listeners(second) == 7)
    }

    /// A listener that stopped reading (its socket backed up, its recheck deadline set) is moved like the others and
    /// judged by the destination's lag rule there: moved to the live edge, then dropped; the reader beside it goes on.
    @Test func aStuckListenerMovesAndIsDroppedByTheDestinationsRule() throws {
        let pool = try Self.twoLoops()
        defer { pool.stop() }
        let configure = { (settings: inout BroadcasterConfiguration) in
            settings.maxLag = 1
            settings.flushInterval = 0
            settings.sendBuffer = 4096
        }
        let first = try BroadcasterTests.Rig(pool: pool, configure)
        let second = try BroadcasterTests.Rig(pool: pool, configure)
        defer {
            first.stop()
            second.stop()
        }
        try first.publish(seconds: 0.5)
        try second.publish(seconds: 0.5)
        let stuck = try ListenerClient(port: first.port, receiveBuffer: 4096)
        let reader = try ListenerClient(port: first.port)
        defer {
            stuck.close()
            reader.close()
        }
        func play(_ rig: BroadcasterTests.Rig, seconds: Double) throws {
            let start = Date()
            for i in 1...Int(seconds * 10) {  // at real time
                try rig.publish(seconds: 0.1)
                let due = Double(i) * 0.1 - Date().timeIntervalSince(start)
                if due > 0 { usleep(UInt32(due * 1_000_000)) }
            }
        }
        #expect(waitUntil(5) { first.broadcaster.counters.listeners.load(ordering: .relaxed) == 2 })
        try play(first, seconds: 0.8)
        var received = reader.read(for: 0.2).bytes
        let ticket = CommandTicket(.moveListeners(from: "/a", to: "/b", id: nil))
        let tally = MoveTally(ticket: ticket, loops: pool.members.count, from: "/a", to: "/b", id: nil)
        #expect(first.broadcaster.move(to: second.broadcaster, id: nil, tally: tally))
        #expect(waitUntil(5) { ticket.outcome != nil })
        #expect(tally.snapshot.moved == 2)
        // The destination's pages at real time: the stuck one falls a second behind, is moved, falls behind again.
        let start = Date()
        for i in 1...40 {
            try second.publish(seconds: 0.1)
            received += reader.read(for: 0.01).bytes
            let due = Double(i) * 0.1 - Date().timeIntervalSince(start)
            if due > 0 { usleep(UInt32(due * 1_000_000)) }
        }
        received += reader.read(for: 0.3).bytes
        let counters = second.broadcaster.counters.snapshot
        #expect(counters.droppedSlow == 1 && counters.listeners == 1, "\(counters)")
        let capture = try LiveCapture(received)
        #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
        #expect(capture.lastGranule >= Int64(4.5 * 48_000), "\(capture.lastGranule)")
    }
}
