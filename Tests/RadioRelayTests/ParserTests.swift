import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

@Suite struct ParserTests {
    /// Audio packets per fixture. Where ffprobe is right it is checked live too (see `matchesFFprobe`); for the
    /// others the count is mpg123's (`mpg123 -t -v`) and the frame walk in Tests/Fixtures/README.md.
    static let expected: [(String, packets: Int, rate: Int, channels: Int, samplesPerFrame: Int)] = [
        ("stereo-44k-128k.mp3", 116, 44_100, 2, 1152),
        ("mono-48k.mp3", 85, 48_000, 1, 1152),
        ("stereo-22k.mp3", 79, 22_050, 2, 576),
        ("id3-xing-vbr.mp3", 78, 44_100, 2, 1152),  // ffprobe: 79, counting the trailing ID3 tag as a packet
        ("garbage-spliced.mp3", 114, 44_100, 2, 1152),  // the 2 damaged frames dropped; ffprobe merges them
        ("rate-switch.mp3", 123, 44_100, 2, 1152),  // 59 at 44.1 kHz stereo, then 64 at 48 kHz mono
    ]

    @Test(arguments: expected.map(\.0))
    func packetCountsAndFormat(_ name: String) throws {
        let expectation = try #require(Self.expected.first { $0.0 == name })
        let (packets, formats, parser) = parseAll(try Fixture.bytes(name))
        #expect(packets.count == expectation.packets)
        let first = try #require(formats.first)
        #expect(first.sampleRate == expectation.rate)
        #expect(first.channels == expectation.channels)
        #expect(first.layer == 3)
        #expect(packets.allSatisfy { $0.bytes.count == $0.header.frameLength })
        #expect(packets.first?.sampleCount == expectation.samplesPerFrame)
        #expect(parser.carryOverCount == 0)
    }

    /// ffprobe agrees on packets and duration for the clean files.
    @Test(
        .enabled(if: tool("ffprobe") != nil, "needs ffprobe (Debian: ffmpeg; `.ci/deps --test`)"),
        arguments: ["stereo-44k-128k.mp3", "mono-48k.mp3", "stereo-22k.mp3"]
    )
    func matchesFFprobe(_ name: String) throws {
        let ffprobe = try #require(tool("ffprobe"))
        let (packets, _, _) = parseAll(try Fixture.bytes(name))
        let listing = try run(
            ffprobe,
            [
                "-v", "error", "-select_streams", "a", "-show_packets", "-of", "csv",
                Fixture.path(name),
            ])
        let probed = listing.stdout.split(separator: "\n").filter { $0.hasPrefix("packet") }
        #expect(packets.count == probed.count)
        let stream = try run(
            ffprobe,
            [
                "-v", "error", "-select_streams", "a", "-show_entries", "stream=duration",
                "-of", "default=nw=1:nk=1", Fixture.path(name),
            ])
        let probedDuration = try #require(Double(stream.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let duration = packets.reduce(0.0) { $0 + $1.duration }
        #expect(abs(duration - probedDuration) < 1e-5)
    }

    @Test(arguments: Fixture.all)
    func oneByteChunksGiveTheSamePackets(_ name: String) throws {
        let bytes = try Fixture.bytes(name)
        let whole = parseAll(bytes)
        let bytewise = parseAll(bytes, chunk: 1)
        let odd = parseAll(bytes, chunk: 417)
        #expect(whole.packets.map(\.bytes) == bytewise.packets.map(\.bytes))
        #expect(whole.packets.map(\.bytes) == odd.packets.map(\.bytes))
        #expect(whole.formats == bytewise.formats)
        #expect(whole.parser.statistics == bytewise.parser.statistics)
        #expect(whole.parser.gapless == bytewise.parser.gapless)
    }

    /// Without waiting for the next header, clean streams give the same packets; chunking still does not matter.
    @Test(arguments: Fixture.all)
    func unconfirmedFramesMatchOnCleanInput(_ name: String) throws {
        let bytes = try Fixture.bytes(name)
        let confirmed = parseAll(bytes)
        let live = parseAll(bytes, confirmsFrames: false)
        let bytewise = parseAll(bytes, chunk: 1, confirmsFrames: false)
        #expect(live.packets.map(\.bytes) == bytewise.packets.map(\.bytes))
        #expect(live.parser.statistics == bytewise.parser.statistics)
        if name == "garbage-spliced.mp3" {
            // The two damaged frames now pass (their damage shows only at the next header), still with two losses.
            #expect(live.packets.count == 116)
            #expect(live.parser.statistics.syncLosses == 2)
        } else if name == "rate-switch.mp3" {
            #expect(live.packets.count == confirmed.packets.count)
        } else {
            #expect(live.packets.map(\.bytes) == confirmed.packets.map(\.bytes))
        }
    }

    /// Garbage that starts with "I" (not an ID3v2 tag) right after a live frame loses sync at once. It used to keep
    /// the lock, so fed byte by byte the first byte after the end of the chunk counted a sync loss that one chunk,
    /// skipping straight to the next 0xFF or "I", never saw (found by ParserFuzz in live mode).
    @Test(arguments: [true, false])
    func garbageStartingWithIAfterAFrameLosesSyncInAnyChunking(_ confirmsFrames: Bool) throws {
        let frames = parseAll(try Fixture.bytes("stereo-44k-128k.mp3")).packets.prefix(10).flatMap(\.bytes)
        let spaces = [UInt8](repeating: 0x20, count: 9)
        let garbage: [UInt8] = [0x49] + spaces + [0x54, 0, 0, 0] + spaces + spaces
        let bytes = frames + garbage
        let whole = parseAll(bytes, confirmsFrames: confirmsFrames)
        for chunk in [1, 3, 11] {
            let chunked = parseAll(bytes, chunk: chunk, confirmsFrames: confirmsFrames)
            #expect(chunked.parser.statistics == whole.parser.statistics, "chunks of \(chunk)")
            #expect(chunked.packets.map(\.bytes) == whole.packets.map(\.bytes), "chunks of \(chunk)")
        }
        #expect(whole.parser.statistics.syncLosses == 1)
        #expect(whole.packets.count == (confirmsFrames ? 9 : 10))  // a file's last frame needs a next header
    }

    /// A live stream may carry an ID3v2 header whose size is corrupt: with the live bound it is taken for garbage
    /// and the audio after it is kept; a file's parser skips a tag of any legal size.
    @Test func aHugeTagSizeInALiveStreamCostsOnlyItsHeader() throws {
        let audio = try Fixture.bytes("stereo-44k-128k.mp3")
        // Syncsafe 0x7F7F7F7F: a claimed 256 MiB tag, then the rest of the stream.
        let header: [UInt8] = [0x49, 0x44, 0x33, 3, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F]
        let frames = parseAll(audio, confirmsFrames: false).packets
        let whole = frames.count
        // The header between two frames, halfway.
        let bytes = frames[..<(whole / 2)].flatMap(\.bytes) + header + frames[(whole / 2)...].flatMap(\.bytes)
        let live = Parser(confirmsFrames: false, maxTagLength: Parser.liveTagLimit)
        var packets = 0
        bytes.withUnsafeBytes { live.parse($0) { if case .packet = $0 { packets += 1 } } }
        live.finish { if case .packet = $0 { packets += 1 } }
        #expect(packets >= whole - 2, "\(packets) of \(whole) frames")
        #expect(live.statistics.id3TagsSkipped == 0)
        let file = parseAll(bytes, confirmsFrames: false).parser
        #expect(file.statistics.id3TagsSkipped == 1)
        #expect(file.statistics.packets <= whole / 2 + 1)
    }

    @Test func skipsID3TagsAndRecognisesTheXingFrame() throws {
        let (packets, _, parser) = parseAll(try Fixture.bytes("id3-xing-vbr.mp3"))
        #expect(parser.statistics.id3TagsSkipped == 2)  // one at the front, one with a footer at the end
        #expect(parser.statistics.infoFramesSkipped == 1)
        #expect(parser.gapless == GaplessInfo(encoderDelay: 576, padding: 1080, frameCount: 78))
        #expect(packets.count == 78)
        #expect(parser.statistics.bytesSkipped == 0)
    }

    @Test func readsTheLAMEGaplessInfo() throws {
        let (_, _, parser) = parseAll(try Fixture.bytes("stereo-44k-128k.mp3"))
        #expect(parser.gapless == GaplessInfo(encoderDelay: 576, padding: 756, frameCount: 116))
    }

    /// The two damaged frames (where garbage was spliced in) are dropped; every intact frame comes through.
    @Test func resyncsOverGarbage() throws {
        let (packets, _, parser) = parseAll(try Fixture.bytes("garbage-spliced.mp3"))
        #expect(packets.count == 114)
        #expect(parser.statistics.syncLosses == 2)
        #expect(parser.statistics.bytesSkipped == 3418 + 918)
        let total = packets.reduce(0) { $0 + $1.bytes.count } + parser.statistics.bytesSkipped
        #expect(total == 51983)
    }

    @Test func reportsEachFormatChange() throws {
        let (packets, formats, _) = parseAll(try Fixture.bytes("rate-switch.mp3"))
        #expect(formats.map(\.sampleRate) == [44_100, 48_000])
        #expect(formats.map(\.channels) == [2, 1])
        #expect(packets.filter { $0.header.sampleRate == 44_100 }.count == 59)
        #expect(packets.filter { $0.header.sampleRate == 48_000 }.count == 64)
    }

    @Test func randomBytesGiveNoFrames() {
        var generator = SplitMix64(seed: 42)
        var falseFrames = 0
        for _ in 0..<200 {
            let bytes = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }
            falseFrames += parseAll(bytes).packets.count
        }
        #expect(falseFrames == 0)
    }

    /// Sync bytes everywhere (0xFF 0xFB …) with random lengths between them must not fool the three-header check.
    @Test func plausibleHeadersAloneDoNotSync() {
        var generator = SplitMix64(seed: 7)
        var bytes: [UInt8] = []
        for _ in 0..<2000 {
            bytes += [0xFF, 0xFB, UInt8.random(in: 0x10...0xEB, using: &generator), 0x44]
            bytes += (0..<Int.random(in: 0...600, using: &generator)).map { _ in
                UInt8.random(in: 0...0xFE, using: &generator)
            }
        }
        #expect(parseAll(bytes).packets.count < 3)
    }

    @Test func aTruncatedLastFrameIsDropped() throws {
        let bytes = try Fixture.bytes("stereo-44k-128k.mp3")
        let cut = Array(bytes.dropLast(100))
        #expect(parseAll(cut).packets.count == 115)
    }

    /// The carry-over stays at a few frames however the input is chunked: nothing handed on is kept.
    @Test func carryOverIsBounded() throws {
        let bytes = try Fixture.bytes("garbage-spliced.mp3")
        let parser = Parser()
        var largest = 0
        for chunk in stride(from: 0, to: bytes.count, by: 1000) {
            bytes[chunk..<min(bytes.count, chunk + 1000)].withUnsafeBytes { parser.parse($0) { _ in } }
            largest = max(largest, parser.carryOverCount)
        }
        #expect(largest < 4 * Parser.maxFrameLength + 1000)
    }

    @Test func headerFieldsAndLengths() throws {
        // MPEG-1 layer III, 128 kb/s, 44.1 kHz, padded, joint stereo.
        let h = try #require(MP3FrameHeader(0xFF, 0xFB, 0x92, 0x44))
        #expect(h.version == .mpeg1 && h.layer == 3 && h.bitrate == 128_000 && h.sampleRate == 44_100)
        #expect(h.padding && h.channels == 2 && h.frameLength == 418)
        // MPEG-2 layer III, 64 kb/s, 22.05 kHz: 72 × 64000 / 22050 = 208.
        let m2 = try #require(MP3FrameHeader(0xFF, 0xF3, 0x80, 0xC4))
        #expect(m2.version == .mpeg2 && m2.sampleRate == 22_050 && m2.frameLength == 208 && m2.samplesPerFrame == 576)
        // MPEG-2.5, 8 kHz, 8 kb/s.
        let m25 = try #require(MP3FrameHeader(0xFF, 0xE3, 0x18, 0xC4))
        #expect(m25.version == .mpeg25 && m25.sampleRate == 8_000 && m25.frameLength == 72)
        #expect(MP3FrameHeader(0xFF, 0xFB, 0xF0, 0x44) == nil)  // bad bitrate index
        #expect(MP3FrameHeader(0xFF, 0xFB, 0x0C, 0x44) == nil)  // free format
        #expect(MP3FrameHeader(0xFF, 0xFB, 0x9C, 0x44) == nil)  // reserved rate
        #expect(MP3FrameHeader(0xFF, 0xE9, 0x90, 0x44) == nil)  // reserved version
    }
}
