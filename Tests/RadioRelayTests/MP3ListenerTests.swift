import Foundation
import Glibc
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

extension RealTimeTests {
    /// The MP3 pass-through mount over real sockets: a station relaying a live ICY upstream (the stereo fixture, a
    /// new title every 2 s), the public HTTP front end, and clients with and without `Icy-MetaData: 1`.
    @Suite struct MP3ListenerTests {
        /// The fixture's frames, each as its bytes.
        static func fixtureFrames() throws -> Set<[UInt8]> {
            Set(try MP3PassThroughTests.frames().map(\.bytes))
        }

        /// Parses `audio` as MP3: the frames, and the bytes that were not frames.
        static func parse(_ audio: [UInt8]) -> (frames: [[UInt8]], skipped: Int) {
            let parser = Parser(confirmsFrames: false)
            var frames: [[UInt8]] = []
            parser.parse(audio) { if case .packet(let packet) = $0 { frames.append(packet.bytes) } }
            return (frames, parser.statistics.bytesSkipped)
        }

        /// An MP3 output's Broadcaster alone, on a free port, flushing every publication, with a 4 KiB send buffer.
        static func broadcaster(_ configure: (inout BroadcasterConfiguration) -> Void) throws -> Broadcaster {
            var configuration = BroadcasterConfiguration()
            configuration.bind = "127.0.0.1"
            configuration.port = 0
            configuration.flushInterval = 0
            configuration.sendBuffer = 4096
            configure(&configuration)
            let broadcaster = try Broadcaster(
                name: "mp3", configuration: configuration, ring: PageRing(capacity: 1024),
                onUnexpectedExit: ServiceThread.terminateProcess)
            try broadcaster.start()
            return broadcaster
        }

        /// A client whose connection is handed to `broadcaster` as the HTTP front end hands a request for an MP3
        /// mount over: `head` first, then the stream with a block every `metaInterval` bytes.
        static func handOver(
            to broadcaster: Broadcaster, head: [UInt8], metaInterval: Int, receiveBuffer: Int32
        ) throws -> ListenerClient {
            let (client, accepted) = try acceptedConnection(receiveBuffer: receiveBuffer)
            let arrival = ArrivingListener(
                socket: FileDescriptor(owning: accepted), peer: try SocketAddress.local(of: client.fd),
                responseHead: head, request: ListenerRequest(line: "GET /x.mp3 HTTP/1.0", metaInterval: metaInterval))
            #expect(broadcaster.handOver(arrival))
            return client
        }

        /// The slow-listener rules hold on an MP3 output as on any: an ICY listener that stops reading is moved to
        /// the live edge once it is `max_lag` (1 s) behind, then dropped, while a listener that reads gets every
        /// run in order at the pace they come.
        @Test func aStuckICYListenerIsMovedThenDroppedAndAReaderGetsEverything() throws {
            let broadcaster = try Self.broadcaster {
                $0.burst = 0
                $0.maxLag = 1
            }
            defer { broadcaster.stop() }
            func run(_ index: Int) -> [UInt8] { [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 1_600) }
            broadcaster.setStreamTitle("Stuck")
            let stuck = try Self.handOver(
                to: broadcaster, head: Array("HTTP/1.0 200 OK\r\n\r\n".utf8), metaInterval: 16_000,
                receiveBuffer: 2048)
            let reader = try ListenerClient(port: broadcaster.address.port)
            defer {
                stuck.close()
                reader.close()
            }
            try #require(waitUntil(5) { broadcaster.counters.listeners.load(ordering: .relaxed) == 2 })
            // 4 s of 100 ms runs at real time (about 128 kb/s), the reader reading all along.
            final class Received: @unchecked Sendable {
                var bytes: [UInt8] = []
            }
            let received = Received()
            let done = DispatchSemaphore(value: 0)
            Thread {
                // Until the 40 runs are in, or 15 s (a slow machine, a sanitizer).
                let deadline = Date().addingTimeInterval(15)
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while received.bytes.count < 64_000 && Date() < deadline {
                    let n = buffer.withUnsafeMutableBytes { recv(reader.fd, $0.baseAddress, $0.count, 0) }
                    if n > 0 { received.bytes += buffer[0..<n] } else if n == 0 { break }
                }
                done.signal()
            }.start()
            let start = Date()
            for index in 0..<40 {
                broadcaster.publish(
                    MP3PassThrough.Chunk(bytes: run(index), timeline: Int64(index + 1) * 4_800, frames: 4))
                let due = Double(index + 1) * 0.1 - Date().timeIntervalSince(start)
                if due > 0 { usleep(UInt32(due * 1_000_000)) }
            }
            done.wait()
            let counters = broadcaster.counters.snapshot
            #expect(
                counters.moved >= 1 && counters.droppedSlow == 1,
                "moved \(counters.moved), dropped \(counters.droppedSlow)")
            #expect(broadcaster.counters.listeners.load(ordering: .relaxed) == 1, "the stuck listener is gone")
            #expect(received.bytes == Array((0..<40).map(run).joined()), "the reader got \(received.bytes.count) bytes")
        }

        /// The ICY framing when writes are cut short: a listener with a tiny receive buffer, a 4 KiB send buffer and
        /// a block after every 100 bytes reads 200 runs of known bytes in small pieces while ten titles of 3.9 KB come.
        /// What it gets, demuxed, must be every run whole and in order, a block after every 100 bytes of audio and
        /// nowhere else, and each title once, in order: writes end inside runs and inside blocks alike.
        @Test func icyFramingHoldsAcrossShortWritesAndTitleChanges() throws {
            let broadcaster = try Self.broadcaster {
                $0.burst = 60
                $0.maxLag = 600
            }
            defer { broadcaster.stop() }
            func run(_ index: Int) -> [UInt8] { (0..<1000).map { UInt8(truncatingIfNeeded: index * 7 + $0 / 10) } }
            func publish(_ runs: Range<Int>) {
                for index in runs {
                    broadcaster.publish(
                        MP3PassThrough.Chunk(bytes: run(index), timeline: Int64(index + 1) * 960, frames: 1))
                }
            }
            // Titles near the longest a block holds (3.9 KB): more than one short write takes, so writes end inside
            // blocks too, not only inside runs.
            func title(_ number: Int) -> String { "Title \(number) " + String(repeating: "x", count: 3_900) }
            broadcaster.setStreamTitle(title(0))
            publish(0..<100)
            // A connection handed over as the HTTP front end does, asking for a block every 100 bytes.
            let head = Array("HTTP/1.0 200 OK\r\nicy-metaint: 100\r\n\r\n".utf8)
            let client = try Self.handOver(to: broadcaster, head: head, metaInterval: 100, receiveBuffer: 1024)
            defer { client.close() }
            // Read in pieces of 1 to 97 bytes; every 15 000 bytes read a new title comes with 10 more runs (a title
            // reaches the loops with the next publication, as in a station, whose pipeline publishes every few ms).
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 97)
            var piece = 1
            var stage = 0
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                let n = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, piece, 0) }
                if n > 0 {
                    received += buffer[0..<n]
                } else if n == 0 || stage == 10 {
                    break  // closed, or nothing more for 200 ms (SO_RCVTIMEO) once everything was published
                }
                piece = piece % 97 + 1
                if stage < 10 && received.count > (stage + 1) * 15_000 {
                    stage += 1
                    broadcaster.setStreamTitle(title(stage))
                    publish(90 + stage * 10..<100 + stage * 10)
                }
            }
            #expect(Array(received.prefix(head.count)) == head)
            var demuxer = ICYDemuxer(interval: 100)
            var audio: [UInt8] = []
            var titles: [String] = []
            received.dropFirst(head.count).withUnsafeBytes { bytes in
                demuxer.demux(bytes, audio: { audio += $0 }, metadata: { titles.append($0["StreamTitle"] ?? "?") })
            }
            let expected = Array((0..<200).map(run).joined())
            #expect(audio.count == 200_000, "\(audio.count) bytes of audio")
            let whole = audio == expected
            #expect(whole, "the audio is not the 200 runs in order")
            // A block after every 100 bytes of audio (the last one perhaps not begun when the reading stopped).
            #expect(
                (audio.count / 100 - 1...audio.count / 100).contains(demuxer.lengthBytes),
                "\(demuxer.lengthBytes) blocks for \(audio.count) bytes")
            let inOrder = titles == (0...10).map(title)
            #expect(inOrder, "titles: \(titles.map { $0.prefix(9) })")
        }

        @Test func titlesGoInBandAtTheIntervalAndTheFramesPassUnchanged() throws {
            let audio = try Fixture.bytes("stereo-44k-128k.mp3")
            // 30 s of ICY stream: 4 096-byte blocks, a new title every 8 blocks (2 s at 16 400 bytes/s).
            let body = icyStream(Array([[UInt8]](repeating: audio, count: 10).joined()), interval: 4096) {
                $0 % 8 == 0 ? "Song \($0 / 8)" : nil
            }
            let upstream = try HTTPTestServer { _ in
                .init(headers: ["icy-metaint": "4096"], body: body, pace: 16_400)
            }
            defer { upstream.stop() }
            let rig = try HTTPListenerTests.Rig(upstream: upstream.baseURL + "/live.mp3") { $0.mp3 = true }
            defer { rig.stop() }
            try #require(waitUntil(10) { rig.station.state.title != nil }, "no title from the upstream")
            // The burst's 2 s are there to be sent.
            try #require(waitUntil(10) { rig.station.state.encodedSeconds > 2.5 }, "no audio")
            let known = try Self.fixtureFrames()

            let (head, body1, _) = try httpExchange(
                rig.port, "GET /test.mp3 HTTP/1.1\r\nHost: x\r\nIcy-MetaData: 1\r\nUser-Agent: test\r\n\r\n",
                seconds: 4)
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(head)")
            #expect(head.contains("\r\nContent-Type: audio/mpeg") && head.contains("\r\nicy-metaint: 16000"), "\(head)")
            var demuxer = ICYDemuxer(interval: ICYMetadataBlock.interval)
            var inBand: [UInt8] = []
            var titles: [String] = []
            var blocks = 0
            body1.withUnsafeBytes { bytes in
                demuxer.demux(
                    bytes, audio: { inBand += $0 },
                    metadata: { fields in titles.append(fields["StreamTitle"] ?? "?") })
            }
            blocks = demuxer.lengthBytes
            // 2 s of burst and 4 s read at 16 000 bytes/s: a block after each 16 000 bytes of audio, no more.
            #expect(blocks == inBand.count / 16_000, "\(blocks) blocks for \(inBand.count) bytes")
            #expect(blocks >= 5)
            // Each title once, when it changed (Icecast's rule), in the upstream's order.
            let numbers = titles.compactMap { Int($0.dropFirst("Song ".count)) }
            #expect(numbers.count == titles.count && numbers.count >= 2, "\(titles)")
            #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "\(titles)")
            // The audio is the upstream's frames, from the first byte: frame-aligned, unchanged.
            let parsed1 = Self.parse(inBand)
            #expect(parsed1.skipped < 418, "\(parsed1.skipped) bytes were not frames")  // at most the cut last frame
            // 2 s of burst and 4 s at 38.3 frames a second: 230 frames.
            #expect(parsed1.frames.count > 215, "\(parsed1.frames.count) frames in \(inBand.count) bytes")
            #expect(parsed1.frames.allSatisfy { known.contains($0) })

            // Without Icy-MetaData: the bare frames, no icy-metaint.
            let (plainHead, plain, _) = try httpExchange(rig.port, "GET /test.mp3 HTTP/1.0\r\n\r\n", seconds: 3)
            #expect(!plainHead.contains("icy-metaint"), "\(plainHead)")
            let parsed2 = Self.parse(plain)
            #expect(Array(plain.prefix(2)) == Array(parsed2.frames.first?.prefix(2) ?? []))
            #expect(parsed2.skipped < 418 && parsed2.frames.allSatisfy { known.contains($0) })
            // An Ogg mount ignores the header, as before.
            let (oggHead, _, _) = try httpExchange(
                rig.port, "GET /test.opus HTTP/1.0\r\nIcy-MetaData: 1\r\n\r\n", seconds: 0.5)
            #expect(oggHead.contains("audio/ogg") && !oggHead.contains("icy-metaint"), "\(oggHead)")
        }
    }
}
