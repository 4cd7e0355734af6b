import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay

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
}
