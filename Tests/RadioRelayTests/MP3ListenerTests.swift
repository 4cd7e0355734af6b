import Foundation
import Glibc
import RadioRelayTestSupport
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
