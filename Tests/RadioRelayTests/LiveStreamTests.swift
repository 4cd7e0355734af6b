import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// What the live path (unconfirmed frames, decoded audio held for the stream clock) does with damaged frames and
/// format changes mid-stream, measured on the decoded signal.
@Suite struct LiveStreamTests {
    /// 20 ms windows (at 48 kHz) whose tone is off: the left 440 Hz or right 1000 Hz amplitude more than 20 % away
    /// from 0.475 (the fixtures' level), so a damaged or missing frame shows as a run of bad windows.
    static func badWindows(_ pcm: PCMBuffer, skip: Int = 2) -> [Int] {
        let window = 960
        var bad: [Int] = []
        var start = skip * window
        while start + window <= pcm.frameCount - window {
            let left = toneAmplitude(pcm.left, frequency: 440, rate: 48_000, range: start..<start + window)
            let right = toneAmplitude(pcm.right, frequency: 1000, rate: 48_000, range: start..<start + window)
            if abs(left - 0.475) > 0.095 || abs(right - 0.475) > 0.095 { bad.append(start / window) }
            start += window
        }
        return bad
    }

    static func decodeLive(_ bytes: [UInt8], chunk: Int) throws -> PCMBuffer {
        let (packets, _, _) = parseAll(bytes, chunk: chunk, confirmsFrames: false)
        let reader = try Reader(commonRate: 48_000)
        var out = PCMBuffer(sampleRate: 48_000)
        for packet in packets { out.append(try reader.read(packet)) }
        out.append(try reader.finish())
        return out
    }

    /// garbage-spliced.mp3 has two frames cut by garbage (3 000 and 500 bytes). Live mode hands a frame on before
    /// the next header confirms it, so each damaged frame reaches the decoder once; the audio around it must stay
    /// intact: at most four bad 20 ms windows per damage — the frame itself (26 ms) and the next one, whose bit
    /// reservoir it held, straddle up to four windows — exactly what file mode (which drops the damaged frame)
    /// loses, and nothing louder than the tones.
    @Test(arguments: [1, 417, 1 << 20])
    func damagedFramesCostOnlyThemselves(chunk: Int) throws {
        let pcm = try Self.decodeLive(try Fixture.bytes("garbage-spliced.mp3"), chunk: chunk)
        let bad = Self.badWindows(pcm)
        // Group consecutive windows into damaged regions.
        var regions: [[Int]] = []
        for index in bad {
            if let last = regions.last?.last, index - last <= 1 {
                regions[regions.count - 1].append(index)
            } else {
                regions.append([index])
            }
        }
        #expect(regions.count <= 2, "bad windows \(bad)")
        #expect(regions.allSatisfy { $0.count <= 4 }, "bad windows \(bad)")
        let (file, _) = try decodeAll("garbage-spliced.mp3", gapless: false)
        #expect(bad.count <= Self.badWindows(file).count, "live \(bad), file \(Self.badWindows(file))")
        let peak = max(pcm.left.map(\.magnitude).max() ?? 0, pcm.right.map(\.magnitude).max() ?? 0)
        #expect(peak < 0.75, "peak \(peak)")
        // 116 frames less what the two damages cost, at 48 kHz.
        let seconds = Double(pcm.frameCount) / 48_000
        #expect(seconds > 3.0 && seconds < 3.26, "\(seconds) s")
    }

    /// rate-switch.mp3 goes from 44.1 kHz stereo to 48 kHz mono mid-stream. Through the live chain and the encoder,
    /// the Ogg stream stays one continuous stream, and the decoded signal has no click at the switch: no step
    /// between two samples larger than the steepest the 880 Hz tone itself makes (2π·880/48 000 · 0.5 ≈ 0.058),
    /// with a margin for the codec.
    @Test func aRateAndChannelChangeKeepsGranulesContinuousAndHasNoClick() throws {
        var settings = StageChain.Configuration()
        settings.confirmsFrames = false
        settings.gapless = false
        settings.holdsDecodedAudio = true
        settings.encoder.serial = 77
        let encoder = try Encoder(settings.encoder)
        let chain = StageChain(settings, encoder: encoder)
        let mp3 = try Fixture.bytes("rate-switch.mp3")
        var ogg = encoder.headerPages.flatMap(\.bytes)
        var offset = 0
        while offset < mp3.count {
            let end = min(mp3.count, offset + 700)
            try mp3[offset..<end].withUnsafeBytes { try chain.feed($0) }
            try chain.release(seconds: chain.queuedSeconds)
            ogg += chain.takePages().flatMap(\.bytes)
            offset = end
        }
        try chain.release(seconds: chain.queuedSeconds)
        try chain.encodeSilence(frames: 4800)
        ogg += chain.takePages().flatMap(\.bytes)
        let capture = try LiveCapture(ogg)
        #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
        let formats = chain.takeEvents().filter { if case .format = $0 { true } else { false } }
        #expect(formats.count == 2)
        // The switch is 59 × 1152 / 44.1 kHz = 1.541 s in; look at ±0.1 s around it (pre-skip included).
        let around = Int((1.541 + Double(capture.preSkip) / 48_000 - 0.1) * 48_000)
        var largest: Float = 0
        for i in around + 1..<around + 9600 {
            largest = max(largest, abs(capture.left[i] - capture.left[i - 1]))
        }
        print("rate switch: largest step between samples around the switch \(largest)")
        #expect(largest < 0.1, "a step of \(largest) at the switch")
        #expect(capture.medianAmplitude(left: true, frequency: 440, skip: 9_600) > 0.3)
    }
}
