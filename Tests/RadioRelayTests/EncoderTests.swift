import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

@Suite struct EncoderTests {
    static func sine(_ frequency: Double, frames: Int, rate: Int = 48_000, offset: Int = 0) -> [Float] {
        (0..<frames).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0 + offset) / Double(rate))) }
    }

    /// Encodes `seconds` of a 440/1000 Hz tone pair in chunks of `chunk` frames and returns everything written.
    static func encodeTones(
        seconds: Double, chunk: Int = 1111, configure: (inout EncoderConfiguration) -> Void = { _ in }
    )
        throws -> (bytes: [UInt8], encoder: Encoder, pages: [OggPage])
    {
        var configuration = EncoderConfiguration()
        configuration.serial = 0x1234_5678
        configure(&configuration)
        let encoder = try Encoder(configuration)
        let rate = configuration.inputRate
        let total = Int(seconds * Double(rate))
        var pages = encoder.headerPages
        var done = 0
        while done < total {
            let n = min(chunk, total - done)
            let buffer = PCMBuffer(
                left: sine(440, frames: n, rate: rate, offset: done),
                right: sine(1000, frames: n, rate: rate, offset: done), sampleRate: rate)
            pages += try encoder.encode(buffer)
            done += n
        }
        pages += try encoder.finish()
        return (pages.flatMap(\.bytes), encoder, pages)
    }

    @Test func headerPagesFollowRFC7845() throws {
        let (_, encoder, pages) = try Self.encodeTones(seconds: 0.1)
        #expect(encoder.headerPages.count == 2)
        let head = try #require(pages.first)
        #expect(head.isBeginning && head.granulePosition == 0 && head.sequence == 0)
        let body = Array(head.bytes[28...])  // 27-byte header + 1 lacing value
        #expect(Array(body[0..<8]) == Array("OpusHead".utf8))
        #expect(body[8] == 1 && body[9] == 2)
        #expect(Int(body[10]) | Int(body[11]) << 8 == encoder.preSkip)
        #expect(encoder.preSkip > 0)
        let tags = pages[1]
        #expect(tags.granulePosition == 0 && tags.sequence == 1 && !tags.isBeginning)
        let text = String(decoding: tags.bytes, as: UTF8.self)
        #expect(text.contains("OpusTags") && text.contains("radio-relay \(RadioRelayVersion.string)"))
        #expect(text.contains("libopus"))
    }

    /// Audio pages: 100 ms each by default, granule = 960 × packets so far, the last one end-trimmed and flagged.
    @Test func granulesAndPageDurations() throws {
        let (bytes, encoder, pages) = try Self.encodeTones(seconds: 1.05)
        let audio = Array(pages.dropFirst(2))
        for (index, page) in audio.dropLast().enumerated() {
            #expect(page.granulePosition == Int64(index + 1) * 5 * 960)
            #expect(!page.isContinued && !page.isEnd)
        }
        let last = try #require(audio.last)
        #expect(last.isEnd)
        #expect(last.granulePosition == Int64(encoder.preSkip) + 50_400)
        #expect(Set(pages.map(\.serial)) == [0x1234_5678])
        #expect(pages.map(\.sequence) == (0..<UInt32(pages.count)).map { $0 })
        let decoded = try decodeOpus(bytes)
        #expect(decoded.left.count == 50_400)  // exactly the input length after pre-skip and end trimming
    }

    @Test(arguments: [20, 60, 1000])
    func pageDurationIsConfigurable(_ ms: Int) throws {
        let (_, encoder, pages) = try Self.encodeTones(seconds: 2) { $0.pageDuration = ms }
        let audio = Array(pages.dropFirst(2))
        let step = Int64(ms * 48)
        for (index, page) in audio.dropLast().enumerated() {
            #expect(page.granulePosition == Int64(index + 1) * step)
        }
        let packets = (encoder.preSkip + 96_000 + 959) / 960
        let perPage = ms / 20
        #expect(audio.count == (packets + perPage - 1) / perPage)
        #expect(audio.last?.granulePosition == Int64(encoder.preSkip + 96_000))
    }

    /// Low-latency mode: 10 ms pages of one 10 ms frame each, and the restricted low-delay application, whose
    /// pre-skip is 2.5 ms (120 samples) instead of 6.5; the stream decodes back to the input's length and tones.
    @Test(arguments: [false, true])
    func tenMillisecondFramesAndLowDelay(lowDelay: Bool) throws {
        let (bytes, encoder, pages) = try Self.encodeTones(seconds: 1) {
            $0.pageDuration = 10
            $0.lowDelay = lowDelay
        }
        #expect(encoder.preSkip == (lowDelay ? 120 : 312), "\(encoder.preSkip)")
        let audio = Array(pages.dropFirst(2))
        for (index, page) in audio.dropLast().enumerated() {
            #expect(page.granulePosition == Int64(index + 1) * 480)
        }
        #expect(audio.count == (encoder.preSkip + 48_000 + 479) / 480)
        let decoded = try decodeOpus(bytes)
        #expect(decoded.left.count == 48_000)
        let window = 12_000..<36_000
        #expect(abs(toneAmplitude(decoded.left, frequency: 440, rate: 48_000, range: window) - 0.5) < 0.03)
        #expect(abs(toneAmplitude(decoded.right, frequency: 1000, rate: 48_000, range: window) - 0.5) < 0.03)
    }

    /// libopus decodes what we wrote back into the same tones.
    @Test(arguments: [48_000, 44_100])
    func decodesBackToTheInput(_ rate: Int) throws {
        let (bytes, _, _) = try Self.encodeTones(seconds: 2) { $0.inputRate = rate }
        let decoded = try decodeOpus(bytes)
        #expect(abs(decoded.duration - 2.0) < 0.001, "\(decoded.duration)")
        let window = 24_000..<72_000
        #expect(abs(toneAmplitude(decoded.left, frequency: 440, rate: 48_000, range: window) - 0.5) < 0.03)
        #expect(abs(toneAmplitude(decoded.right, frequency: 1000, rate: 48_000, range: window) - 0.5) < 0.03)
        #expect(toneAmplitude(decoded.left, frequency: 1000, rate: 48_000, range: window) < 0.01)
    }

    /// Constrained VBR keeps pure tones near the target (unconstrained spends far more on them).
    @Test func constrainedVBRStaysNearTheTarget() throws {
        let (bytes, _, _) = try Self.encodeTones(seconds: 4)
        let bitrate = Double(bytes.count * 8) / 4
        #expect(bitrate < 96_000 * 1.15, "\(bitrate) b/s")
    }

    @Test func silenceKeepsTheClock() throws {
        var configuration = EncoderConfiguration()
        configuration.pageDuration = 20
        let encoder = try Encoder(configuration)
        let pages = try encoder.encodeSilence(frames: 48_000)
        #expect(pages.count == 50)
        #expect(pages.last?.granulePosition == 48_000)
    }

    @Test func rejectsBadSettings() {
        var c = EncoderConfiguration()
        c.pageDuration = 30
        #expect(throws: ConfigurationError.self) { try c.validate() }
        c = EncoderConfiguration()
        c.bitrate = 1000
        #expect(throws: ConfigurationError.self) { try c.validate() }
        c = EncoderConfiguration()
        c.complexity = 11
        #expect(throws: ConfigurationError.self) { try c.validate() }
    }

    @Test func oggReaderCatchesCorruption() throws {
        var (bytes, _, _) = try Self.encodeTones(seconds: 0.5)
        bytes[200] ^= 0x01
        #expect(throws: OggPageReader.Failure.self) { _ = try decodeOpus(bytes) }
    }

    @Test func parsesUnits() {
        #expect(Units.bitrate("96k") == 96_000)
        #expect(Units.bitrate("96000") == 96_000)
        #expect(Units.bitrate("1.5M") == 1_500_000)
        #expect(Units.bitrate("k") == nil)
        #expect(Units.bitrate("-5k") == nil)
        #expect(Units.bitrate("12.3456k") == nil)
    }
}

/// A reload's new bitrate, complexity and constrained VBR go to the running encoders; nothing else does.
@Suite struct EncoderRetuneTests {
    @Test(arguments: [48_000, 44_100]) func aChainRetunesItsEncodersInPlace(commonRate: Int) throws {
        var configuration = StationConfiguration()
        configuration.upstream = "/a.mp3"
        configuration.commonRate = commonRate
        configuration.renditions = [RenditionConfiguration(name: "low")]
        configuration.renditions[0].broadcaster.port = 8001
        let outputs = try configuration.outputSettings.map { output in
            StationOutput(
                name: output.name, mount: output.mount, format: output.format,
                encoderSettings: LockedBox(output.encoder),
                broadcaster: try Broadcaster(
                    name: "t",
                    configuration: {
                        var b = output.broadcaster
                        b.bind = "127.0.0.1"
                        b.port = 0
                        return b
                    }(),
                    ring: PageRing(capacity: 16)))
        }
        let chain = try #require(try Pipeline.makeChain(configuration, outputs: outputs) as? StageChain)
        var wanted = configuration.outputSettings.map(\.encoder)
        wanted[0].bitrate = 64_000
        wanted[0].complexity = 5
        wanted[1].constrainedVBR = false
        try chain.retune(wanted)
        #expect(chain.encoders[0].configuration.bitrate == 64_000 && chain.encoders[0].configuration.complexity == 5)
        #expect(!chain.encoders[1].configuration.constrainedVBR)
        #expect(chain.encoders.allSatisfy { $0.configuration.inputRate == commonRate })
        var mono = wanted
        mono[0].channels = 1
        #expect(throws: ConfigurationError.self) { try chain.retune(mono) }
    }
}
