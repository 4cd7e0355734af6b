import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The one stage chain both paths use: the same bytes give the same pages whatever the chunking, errors come out of
/// the call that caused them, and ICY framing is taken apart on the way in.
@Suite struct StageChainTests {
    /// Feeds `bytes` in `chunk`-byte pieces and returns the whole Ogg stream.
    static func run(_ bytes: [UInt8], chunk: Int, serial: UInt32 = 7) throws -> [UInt8] {
        var settings = StageChain.Configuration()
        settings.encoder.serial = serial
        let chain = StageChain(settings)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let end = min(bytes.count, i + chunk)
            try bytes[i..<end].withUnsafeBytes { try chain.feed($0) }
            for page in chain.takePages() { out += page.bytes }
            i = end
        }
        #expect(try chain.finish())
        for page in chain.takePages() { out += page.bytes }
        return out
    }

    @Test func chunkingDoesNotChangeTheOutput() throws {
        let mp3 = try Fixture.bytes("stereo-44k-128k.mp3")
        let whole = try Self.run(mp3, chunk: 1 << 20)
        #expect(try Self.run(mp3, chunk: 417) == whole)
        #expect(whole.count > 10_000)
    }

    @Test func formatAndMetadataComeOutAsEvents() throws {
        let mp3 = try Fixture.bytes("stereo-44k-128k.mp3")
        // ICY framing every 1000 bytes: the first block carries a title, the others are empty.
        var framed: [UInt8] = []
        var offset = 0
        var blocks = 0
        while offset < mp3.count {
            let end = min(mp3.count, offset + 1000)
            framed += mp3[offset..<end]
            offset = end
            guard end - offset == 0, end < mp3.count || end % 1000 == 0 else { continue }
            if blocks == 0 {
                var text = Array("StreamTitle='Test';".utf8)
                text += [UInt8](repeating: 0, count: 32 - text.count)
                framed += [2] + text
            } else {
                framed.append(0)
            }
            blocks += 1
        }
        let chain = StageChain(StageChain.Configuration(), encoder: nil)
        chain.restart(metaInterval: 1000)
        try framed.withUnsafeBytes { try chain.feed($0) }
        let events = chain.takeEvents()
        #expect(events.count == 2)
        #expect(events.contains(.metadata(["StreamTitle": "Test"])))
        guard case .format(let format)? = events.first(where: { if case .format = $0 { true } else { false } })
        else {
            Issue.record("no format event")
            return
        }
        #expect(format.sampleRate == 44_100)
        #expect(chain.takeEvents().isEmpty)
        // Same audio as the unframed bytes: the metadata never reached the Parser.
        #expect(chain.parser.statistics.bytesSkipped == 0)
    }

    @Test func anEncoderGivenUpFrontIsUsedAndSilenceKeepsItsClock() throws {
        let encoder = try Encoder(EncoderConfiguration())
        var settings = StageChain.Configuration()
        settings.confirmsFrames = false
        settings.gapless = false
        let chain = StageChain(settings, encoder: encoder)
        try chain.encodeSilence(frames: 48_000)
        let pages = chain.takePages()
        #expect(pages.count == 10)  // 50 packets of 20 ms on 100 ms pages
        #expect(chain.samplesEncoded == 48_000)
        #expect(chain.secondsEncoded == 1)
        try chain.encodeSilence(frames: 0)
        #expect(chain.takePages().isEmpty)
    }

    @Test func notMP3FinishesWithoutAnEncoder() throws {
        let chain = StageChain(StageChain.Configuration())
        let noise = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        try noise.withUnsafeBytes { try chain.feed($0) }
        #expect(try !chain.finish())
        #expect(chain.encoder == nil)
        #expect(chain.takePages().isEmpty)
    }

    @Test func stageErrorsReachTheCaller() throws {
        // An unsupported common rate is the Reader's error at the first packet: thrown by that feed call.
        var settings = StageChain.Configuration()
        settings.commonRate = 32_000
        let chain = StageChain(settings)
        let mp3 = try Fixture.bytes("stereo-44k-128k.mp3")
        #expect(throws: ConfigurationError.self) {
            try mp3.withUnsafeBytes { try chain.feed($0) }
        }
    }

    /// The live chain (decoded audio held for the clock) over a 3 s fixture with ICY blocks every 0.5 s: titles at
    /// blocks 1, 2 (the same again) and 3, released 0.1 s at a time. Returns the Ogg stream.
    static func liveChain(chainsTitles: Bool, metadata: Bool = true) throws -> [UInt8] {
        let mp3 = try Fixture.bytes("stereo-44k-128k.mp3")
        let titles = [1: "One", 2: "One", 3: "Two"]
        let framed = icyStream(mp3, interval: 8_000) { titles[$0] }
        var settings = StageChain.Configuration()
        settings.encoder.serial = 11
        settings.holdsDecodedAudio = true
        settings.confirmsFrames = false
        settings.gapless = false
        let encoder = try Encoder(settings.encoder)
        let chain = StageChain(settings, encoder: encoder)
        chain.chainsTitles = chainsTitles
        chain.restart(metaInterval: metadata ? 8_000 : nil)
        try (metadata ? framed : mp3).withUnsafeBytes { try chain.feed($0) }
        while chain.queuedSeconds > 0 { try chain.release(seconds: 0.1) }
        return (encoder.headerPages + chain.takePages()).flatMap(\.bytes)
    }

    /// Each new title starts a link where its metadata block sat in the audio (128 kb/s: block n after (n + 1) ×
    /// 0.5 s), when the held audio that followed it is released; the repeated title starts none. The mark lands
    /// where the decoded audio ended when the block arrived: up to one MP3 frame (26 ms) early, the frame still
    /// incomplete then, plus the first frame (a Xing frame without audio).
    @Test func titlesStartLinksWhereTheirBlocksSatInTheAudio() throws {
        let capture = try ChainedCapture(try Self.liveChain(chainsTitles: true))
        #expect(capture.problems.isEmpty, "\(capture.problems)")
        #expect(capture.links.map(\.title) == [nil, "One", "Two"])
        let lengths = capture.links.map { link in
            Double((link.lastGranule - Int64(link.preSkip))) / 48_000
        }
        #expect(abs(lengths[0] - 1.0) < 0.06 && abs(lengths[1] - 1.0) < 0.06, "links last \(lengths) s")
    }

    /// Off, metadata never touches the Ogg stream: the same bytes as the same audio without ICY framing.
    @Test func withoutChainedTitlesMetadataChangesNoByte() throws {
        let plain = try Self.liveChain(chainsTitles: false, metadata: false)
        #expect(try Self.liveChain(chainsTitles: false) == plain)
        #expect(try Self.liveChain(chainsTitles: true) != plain)
        #expect(try ChainedCapture(plain).links.count == 1)
    }
}
