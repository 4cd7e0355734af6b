import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelayMedia
@testable import RadioRelaySystem

/// The MP3 pass-through on virtual time: the stage chain's calls are made by hand, as the stream clock would make
/// them, and what comes out is compared byte for byte with the upstream's frames.
@Suite struct MP3PassThroughTests {
    /// The fixture's audio frames, as the Parser hands them on.
    static func frames(_ fixture: String = "stereo-44k-128k.mp3") throws -> [AudioPacket] {
        var packets: [AudioPacket] = []
        let parser = Parser(confirmsFrames: false)
        let bytes = try Fixture.bytes(fixture)
        parser.parse(bytes) { if case .packet(let packet) = $0 { packets.append(packet) } }
        return packets
    }

    /// Samples a frame run decodes to, and the largest magnitude among them (libmpg123).
    static func decode(_ bytes: [UInt8]) throws -> (samples: Int, peak: Float) {
        let decoder = try MPG123Decoder()
        try bytes.withUnsafeBytes { try decoder.feed($0) }
        var samples = 0
        var peak: Float = 0
        loop: while true {
            switch decoder.next() {
            case .audio(let floats):
                samples += floats.count
                for value in floats { peak = max(peak, abs(value)) }
            case .newFormat: continue
            case .needMore: break loop
            case .error(let error): throw error
            }
        }
        return (samples, peak)
    }

    @Test func releasedSecondsGoOutAsWholeFramesInOrderUnchanged() throws {
        let frames = try Self.frames()
        let pass = MP3PassThrough()
        for frame in frames { pass.append(frame) }
        var out: [UInt8] = []
        // 261 steps of 10 ms: 2.61 s, which 99 frames of 26.12 ms cover (the 100th would need 2.612 s).
        for _ in 0..<261 {
            pass.release(seconds: 0.01)
            if let chunk = pass.take() { out += chunk.bytes }
        }
        #expect(out == Array(frames[..<99].map(\.bytes).joined()))
        #expect(pass.statistics.framesOut == 99)
        // The timeline counts 48 kHz samples: 99 × 1152 at 44.1 kHz.
        pass.release(seconds: 0.01)
        let next = try #require(pass.take())
        #expect(next.frames == 1 && next.bytes == frames[99].bytes)
        #expect(next.timeline == Int64(100 * 1152 * 48_000 / 44_100))
    }

    @Test func droppedSecondsDropAsManyFramesAndTheRestFollows() throws {
        let frames = try Self.frames()
        let pass = MP3PassThrough()
        for frame in frames { pass.append(frame) }
        pass.drop(seconds: 1.0)  // 38 frames of 26.12 ms (the 39th would need 1.019 s)
        #expect(pass.statistics.framesDropped == 38)
        pass.release(seconds: 0.03)
        #expect(pass.take()?.bytes == frames[38].bytes)
    }

    @Test func silenceIsSilentFramesOfTheNewestFormatThatDecodeToZero() throws {
        let pass = MP3PassThrough()
        // Before any frame: 44.1 kHz stereo 128 kb/s, 417 bytes a frame.
        #expect(MP3SilentFrame.standard?.bytes.count == 417)
        pass.silence(seconds: 1.0)
        let before = try #require(pass.take())
        #expect(before.frames == 38 && before.bytes.count == 38 * 417)
        let decodedBefore = try Self.decode(before.bytes)
        #expect(decodedBefore.samples == 38 * 1152 * 2 && decodedBefore.peak == 0)
        // After the mono 48 kHz fixture's frames: silence in its format.
        let mono = try Self.frames("mono-48k.mp3")
        for frame in mono { pass.append(frame) }
        pass.release(seconds: Double(mono.count) * 0.024 + 0.001)
        #expect(pass.take()?.frames == mono.count)
        pass.silence(seconds: 0.24)
        let after = try #require(pass.take())
        #expect(after.frames == 10)
        let header = try #require(MP3FrameHeader(after.bytes[0], after.bytes[1], after.bytes[2], after.bytes[3]))
        #expect(header.sampleRate == 48_000 && header.channels == 1 && !header.hasCRC && !header.padding)
        let decodedAfter = try Self.decode(after.bytes)
        #expect(decodedAfter.samples == 10 * 1152 && decodedAfter.peak == 0)
    }

    @Test func aRateChangeIsPassedThroughAndTheTimelineCountsEachRate() throws {
        let frames = try Self.frames("rate-switch.mp3")
        let rates = Set(frames.map(\.header.sampleRate))
        #expect(rates.count == 2, "\(rates)")
        let pass = MP3PassThrough()
        for frame in frames { pass.append(frame) }
        pass.release(seconds: frames.reduce(0) { $0 + $1.duration } + 0.001)
        let chunk = try #require(pass.take())
        #expect(chunk.bytes == Array(frames.map(\.bytes).joined()))
        let exact = frames.reduce(0.0) {
            $0 + Double($1.header.samplesPerFrame) * 48_000 / Double($1.header.sampleRate)
        }
        #expect(abs(Double(chunk.timeline) - exact) <= 2)
    }

    @Test func theQueueIsBoundedAndTrimmedToTheDecodedAudio() throws {
        let frame = try #require(Self.frames().first)
        let pass = MP3PassThrough()
        for _ in 0..<(MP3PassThrough.maxQueuedFrames + 10) { pass.append(frame) }
        #expect(pass.queuedFrames == MP3PassThrough.maxQueuedFrames)
        #expect(pass.statistics.framesDropped == 10)
        pass.trim(toSeconds: 1.0)
        #expect(pass.queuedFrames == 38 && pass.queuedSeconds <= 1.0)
        // Nonsense from a caller changes nothing.
        pass.release(seconds: .nan)
        pass.release(seconds: -1)
        pass.drop(seconds: .infinity)
        pass.silence(seconds: -.infinity)
        #expect(pass.take() == nil && pass.queuedFrames == 38)
    }

    @Test func releaseCreditDoesNotPileUpWhileNoFramesWait() throws {
        let frames = try Self.frames()
        let pass = MP3PassThrough()
        pass.release(seconds: 5)  // decoded audio released with no frame waiting (cannot cover any)
        for frame in frames[..<10] { pass.append(frame) }
        pass.release(seconds: 0.001)
        // At most one frame's worth was carried over: not the five seconds.
        #expect((pass.take()?.frames ?? 0) <= 3)
    }

    @Test func icyBlocksReadBackThroughTheDemuxer() throws {
        let titles = ["Artist – Title", "It's 'quoted'", String(repeating: "é", count: 3_000)]
        var stream: [UInt8] = []
        for title in titles {
            stream += [UInt8](repeating: 0xAA, count: 100) + ICYMetadataBlock.block(title: title)
        }
        stream += [UInt8](repeating: 0xAA, count: 100) + ICYMetadataBlock.empty
        var demuxer = ICYDemuxer(interval: 100)
        var seen: [String] = []
        var audio = 0
        stream.withUnsafeBytes { bytes in
            demuxer.demux(bytes, audio: { audio += $0.count }, metadata: { seen.append($0["StreamTitle"] ?? "") })
        }
        #expect(audio == 400)
        #expect(seen.count == 3)
        #expect(seen[0] == titles[0])
        #expect(seen[2].count < 3_000 && seen[2].allSatisfy { $0 == "é" })
        #expect(ICYMetadataBlock.block(title: titles[2]).count <= 1 + ICYMetadataBlock.maxText)
    }

    /// An upstream title cannot end the field and add its own (`StreamUrl`): the apostrophe before a `;` is `’`.
    @Test func aTitleCannotAddFieldsOfItsOwn() {
        let block = ICYMetadataBlock.block(title: "x';StreamUrl='http://evil.example/';a='")
        var demuxer = ICYDemuxer(interval: 1)
        var fields: [[String: String]] = []
        ([0xAA] + block).withUnsafeBytes { bytes in
            demuxer.demux(bytes, audio: { _ in }, metadata: { fields.append($0) })
        }
        #expect(fields.count == 1 && fields.first?["StreamUrl"] == nil, "\(fields)")
        #expect(fields.first?["StreamTitle"] == "x\u{2019};StreamUrl='http://evil.example/\u{2019};a='")
    }
}
