import Foundation
import Glibc
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// A mount's time-shift thread over real sockets, on an archive of three 10 s files of tone written as the writer
/// writes them: a listener that reads gets its burst and then real time, one Ogg stream across the files; a
/// listener that stops reading (a player stopped with SIGSTOP, a path that blackholes: the server's side sees the
/// same full socket) is dropped as too slow once its socket took nothing for the service's `stuckAfter`, with a RST
/// as a stuck live listener — and the reader is never held meanwhile, as its own real-time pace shows.
@Suite struct TimeShiftServiceTests {
    /// The archive: `count` files of 10 s of a 440 Hz tone, the last one ending now, in `directory`.
    static func archive(in directory: String, count: Int, endingAt now: Int64) throws -> ArchiveIndex {
        let encoder = try Encoder(EncoderConfiguration())
        var index = ArchiveIndex()
        var base: Int64 = 0
        var frames = 0
        for number in 0..<count {
            let start = now - Int64(count - number) * 10_000
            let (bytes, entry) = try ArchivePlayheadTests.file(
                start: start, pages: 100, encoder: encoder, base: &base
            ) { encoder in
                let tone = EncoderTests.sine(440, frames: 4800, offset: frames)
                frames += 4800
                return try encoder.encode(PCMBuffer(left: tone, right: tone, sampleRate: 48_000))
            }
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + entry.name))
            index.insert(entry)
        }
        return index
    }

    /// A client whose connection is handed to `service` as the front end hands `?start=` over, the server's side
    /// with a send buffer of `sendBuffer` bytes.
    static func handOver(
        to service: TimeShiftService, from moment: Int64, receiveBuffer: Int32, sendBuffer: Int32
    ) throws -> ListenerClient {
        let (client, accepted) = try acceptedConnection(receiveBuffer: receiveBuffer)
        var size = sendBuffer
        #expect(setsockopt(accepted, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size)) == 0)
        let arrival = ArrivingListener(
            socket: FileDescriptor(owning: accepted), peer: try SocketAddress.local(of: client.fd),
            responseHead: Array("HTTP/1.0 200 OK\r\n\r\n".utf8),
            request: ListenerRequest(line: "GET /test.opus HTTP/1.0", metaInterval: 0))
        let answer: TimeShiftService.Answer = { status, _, body, _ in Array("HTTP/1.0 \(status) x\r\n\r\n".utf8) + body
        }
        #expect(service.handOver(arrival, from: .at(moment), answer: answer))
        return client
    }

    @Test func aListenerThatStopsReadingIsDroppedAndTheReaderIsNeverHeld() throws {
        let directory = temporaryPath("shift-service")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = Int64(wallClockNow() * 1000)
        let index = try Self.archive(in: directory, count: 3, endingAt: now)
        let broadcaster = try RealTimeTests.MP3ListenerTests.broadcaster { $0.burst = 0 }
        defer { broadcaster.stop() }
        let service = try TimeShiftService(
            broadcaster: broadcaster, directory: directory, format: .opus, index: { index },
            titles: { ArchiveTitles() }, stuckAfter: 1)
        try service.start()
        defer { service.stop() }
        let began = monotonicNow()
        let reader = try Self.handOver(to: service, from: now - 25_000, receiveBuffer: 1 << 20, sendBuffer: 1 << 20)
        let stalled = try Self.handOver(to: service, from: now - 25_000, receiveBuffer: 2048, sendBuffer: 4096)
        #expect(waitUntil(5) { service.counters.listeners.load(ordering: .relaxed) == 2 })
        var heard: [UInt8] = []
        var droppedAfter: Double?
        while monotonicNow() - began < 4 {
            heard += reader.read(for: 0.1).bytes
            if droppedAfter == nil, service.counters.listeners.load(ordering: .relaxed) == 1 {
                droppedAfter = monotonicNow() - began
            }
        }
        let elapsed = monotonicNow() - began
        let dropped = try #require(droppedAfter, "the stalled listener was not dropped")
        // Its socket filled within the burst; then 1 s without progress.
        #expect(dropped >= 1 && dropped < 2.5, "dropped after \(dropped) s")
        // With a RST, as a stuck live listener: the kernel's unsent bytes are thrown away, not retransmitted.
        let ending = stalled.ending(within: 2)
        #expect(ending == ECONNRESET, "the connection ended with \(endingName(ending))")
        // The reader: its head, which names the moment it hears first, then its 2 s burst and real time, one Ogg
        // stream from the archive's headers on.
        let head = Array(
            "HTTP/1.0 200 OK\r\nX-Archive-Start: \(TimeShiftLoop.iso(now - 25_000, exact: true))\r\n\r\n".utf8)
        #expect(heard.starts(with: head), "\(String(decoding: heard.prefix(80), as: UTF8.self))")
        let stream = try LiveCapture(Array(heard.dropFirst(head.count)))
        #expect(stream.headerOK && stream.sequenceGaps == 0 && stream.granuleRegressions == 0)
        let audio = Double(stream.lastGranule) / 48_000
        #expect(abs(audio - (elapsed + TimeShiftListener.lead)) < 0.5, "\(audio) s of audio after \(elapsed) s")
        #expect(service.counters.served.load(ordering: .relaxed) == 2)
    }

    @Test func theMomentHeardFirstGoesBeforeTheHeadsBlankLine() {
        let field = ("X-Archive-Start", TimeShiftLoop.iso(1_796_000_000_250, exact: true))
        let head = Array("HTTP/1.0 200 OK\r\nContent-Type: audio/ogg\r\n\r\n".utf8)
        #expect(
            String(decoding: TimeShiftLoop.adding(field, to: head), as: UTF8.self)
                == "HTTP/1.0 200 OK\r\nContent-Type: audio/ogg\r\nX-Archive-Start: 2026-11-30T00:53:20.250Z\r\n\r\n")
        #expect(TimeShiftLoop.iso(1_796_000_000_007, exact: true) == "2026-11-30T00:53:20.007Z")
        #expect(TimeShiftLoop.iso(1_796_000_000_000, exact: true) == "2026-11-30T00:53:20.000Z")
        #expect(TimeShiftLoop.iso(1_796_000_000_999) == "2026-11-30T00:53:20Z")
        // A head without its blank line (none is sent on raw TCP) is kept as it is.
        for other in [[], Array("ICY 200 OK\r\n".utf8), Array("\r\n".utf8)] as [[UInt8]] {
            #expect(TimeShiftLoop.adding(field, to: other) == other)
        }
    }
}
