import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The Broadcaster alone: a ring fed with real Opus pages, real sockets on 127.0.0.1.
@Suite(.timeLimit(.minutes(1))) struct BroadcasterTests {
    /// A broadcaster on a free port with headers set, and an encoder making 100 ms pages of a 440/1000 Hz tone.
    final class Rig {
        let encoder: Encoder
        let broadcaster: Broadcaster
        var frames = 0

        init(
            budget: ListenerBudget = ListenerBudget(), pool: NetworkPool? = nil,
            _ configure: (inout BroadcasterConfiguration) -> Void = { _ in }
        ) throws {
            var configuration = BroadcasterConfiguration()
            configuration.bind = "127.0.0.1"
            configuration.port = 0
            configure(&configuration)
            encoder = try Encoder(EncoderConfiguration())
            let ring = PageRing(capacity: 400)
            ring.setHeaders(encoder.headerPages)
            broadcaster = try Broadcaster(
                name: "test", configuration: configuration, ring: ring,
                onUnexpectedExit: ServiceThread.terminateProcess,
                services: ListenerServices(pool: pool, budget: budget))
            try broadcaster.start()
        }

        var port: UInt16 { broadcaster.address.port }

        /// Encodes and publishes `seconds` of tone.
        func publish(seconds: Double) throws {
            let n = Int(seconds * 48_000)
            let left = EncoderTests.sine(440, frames: n, offset: frames)
            let right = EncoderTests.sine(1000, frames: n, offset: frames)
            frames += n
            broadcaster.publish(try encoder.encode(PCMBuffer(left: left, right: right, sampleRate: 48_000)))
        }

        func stop() { broadcaster.stop() }
    }

    @Test func joinGetsHeadersThenABurstFromACleanPageThenLivePages() throws {
        let rig = try Rig {
            $0.burst = 2
            $0.flushInterval = 0
        }
        defer { rig.stop() }
        try rig.publish(seconds: 5)
        let client = try ListenerClient(port: rig.port)
        defer { client.close() }
        let first = client.read(for: 0.5)
        try rig.publish(seconds: 1)
        let second = client.read(for: 0.5)
        let capture = try LiveCapture(first.bytes + second.bytes)
        #expect(capture.headerOK)
        #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
        // The burst: pages ending within the last 2 s before the join, then 1 s live.
        let firstGranule = try #require(capture.firstAudioGranule)
        #expect(firstGranule > Int64(2.9 * 48_000) && firstGranule <= Int64(3.2 * 48_000), "\(firstGranule)")
        #expect(capture.lastGranule >= Int64(5.9 * 48_000))
        #expect(capture.medianAmplitude(left: true, frequency: 440) > 0.45)
        #expect(capture.medianAmplitude(left: false, frequency: 1000) > 0.45)
    }

    @Test func limitsCloseExtraConnectionsAtOnce() throws {
        let rig = try Rig {
            $0.maxListeners = 3
            $0.maxPerIP = 2
        }
        defer { rig.stop() }
        try rig.publish(seconds: 1)
        let a = try ListenerClient(port: rig.port)
        let b = try ListenerClient(port: rig.port)
        defer {
            a.close()
            b.close()
        }
        #expect(!a.read(for: 0.3).bytes.isEmpty)
        let c = try ListenerClient(port: rig.port)  // a third from 127.0.0.1: over max-per-ip
        defer { c.close() }
        let refused = c.read(for: 1)
        #expect(refused.closed && refused.bytes.isEmpty)
        #expect(rig.broadcaster.counters.snapshot.rejected == 1)
        #expect(rig.broadcaster.counters.snapshot.listeners == 2)
        #expect(!b.read(for: 0.3).bytes.isEmpty)  // the others are untouched
    }

    @Test func aListenerMayTalkALittleButNotTooMuch() throws {
        let rig = try Rig { $0.readCap = 1000 }
        defer { rig.stop() }
        try rig.publish(seconds: 1)
        let polite = try ListenerClient(port: rig.port)
        let chatty = try ListenerClient(port: rig.port)
        defer {
            polite.close()
            chatty.close()
        }
        polite.send("GET / HTTP/1.0\r\nHost: x\r\n\r\n")
        chatty.send(String(repeating: "x", count: 5000))
        let spoken = chatty.read(for: 1)
        #expect(spoken.closed)
        try rig.publish(seconds: 0.5)
        let served = polite.read(for: 0.5)
        #expect(!served.closed && !served.bytes.isEmpty)
        #expect(rig.broadcaster.counters.snapshot.droppedChatty == 1)
    }

    /// A listener that reads too slowly is moved to the live edge once, then dropped; one that stops reading is
    /// dropped; a normal one sees every page, without a gap. The one real-time check of the slow-listener rules
    /// (every branch of them is tested on virtual time in ListenerScheduleTests): the smallest lag allowance and
    /// small socket buffers keep it short.
    @Test func slowListenersAreMovedThenDropped() throws {
        let seconds = 5.0
        let rig = try Rig {
            $0.maxLag = 1
            $0.flushInterval = 0
            $0.sendBuffer = 4096
        }
        defer { rig.stop() }
        try rig.publish(seconds: 0.5)
        let slow = try ListenerClient(port: rig.port, receiveBuffer: 4096)
        let stuck = try ListenerClient(port: rig.port, receiveBuffer: 4096)
        let reader = try ListenerClient(port: rig.port)
        defer {
            slow.close()
            stuck.close()
            reader.close()
        }
        final class Shared: @unchecked Sendable {
            let lock = NSLock()
            var readerBytes: [UInt8] = []
            var slowBytes: [UInt8] = []
            var slowClosed = false
            var publishing = true
            var isPublishing: Bool {
                lock.lock()
                defer { lock.unlock() }
                return publishing
            }
        }
        let shared = Shared()
        let done = DispatchSemaphore(value: 0)
        Thread {
            while shared.isPublishing { shared.readerBytes += reader.read(for: 0.2).bytes }
            shared.readerBytes += reader.read(for: 0.5).bytes
            done.signal()
        }.start()
        Thread {
            // About 3 KB/s: a quarter of the stream's rate.
            while shared.isPublishing && !shared.slowClosed {
                let (bytes, closed) = slow.read(for: 0.1, limit: 300)
                shared.slowBytes += bytes
                shared.slowClosed = closed
            }
            // Then quickly, to see the close behind what the socket buffers still hold.
            if !shared.slowClosed {
                let (bytes, closed) = slow.read(for: 1)
                shared.slowBytes += bytes
                shared.slowClosed = closed
            }
            done.signal()
        }.start()
        let start = Date()
        for i in 1...Int(seconds * 10) {  // audio at real time
            try rig.publish(seconds: 0.1)
            let due = Double(i) * 0.1 - Date().timeIntervalSince(start)
            if due > 0 { usleep(UInt32(due * 1_000_000)) }
        }
        shared.lock.lock()
        shared.publishing = false
        shared.lock.unlock()
        done.wait()
        done.wait()
        let counters = rig.broadcaster.counters.snapshot
        #expect(counters.moved >= 1)  // the slow one; the stuck one too if it happened to stop at a page boundary
        #expect(counters.droppedSlow == 2)
        #expect(counters.listeners == 1)
        #expect(shared.slowClosed)
        // The slow listener's stream: valid throughout, with exactly one jump (the move) after the join.
        let slowCapture = try LiveCapture(shared.slowBytes)
        let received = "\(shared.slowBytes.count) bytes, last granule \(slowCapture.lastGranule)"
        #expect(
            slowCapture.sequenceGaps == 1 && slowCapture.granuleRegressions == 0,
            "gaps \(slowCapture.sequenceGaps), \(received)")
        let capture = try LiveCapture(shared.readerBytes)
        #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
        #expect(capture.lastGranule >= Int64(seconds * 48_000))
    }

    @Test func aTakenPortIsAClearError() throws {
        let rig = try Rig()
        defer { rig.stop() }
        var configuration = BroadcasterConfiguration()
        configuration.bind = "127.0.0.1"
        configuration.port = Int(rig.port)
        #expect { try Broadcaster(name: "again", configuration: configuration, ring: PageRing(capacity: 4)) } throws: {
            "\($0)".contains("bind 127.0.0.1:\(rig.port)") && "\($0)".contains("in use")
        }
    }
}
