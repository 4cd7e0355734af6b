import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

@Suite struct ReaderTests {
    /// (fixture, left Hz, right Hz, source rate, expected level): tones come out at the right frequency and level
    /// on each channel. CBR fixtures decode at 0.475 (lame's encode, same in ffmpeg and mpg123), VBR at 0.5.
    static let tones: [(String, Double, Double, Double)] = [
        ("stereo-44k-128k.mp3", 440, 1000, 0.475),
        ("mono-48k.mp3", 660, 660, 0.475),
        ("stereo-22k.mp3", 330, 880, 0.475),
        ("id3-xing-vbr.mp3", 550, 550, 0.5),
    ]

    @Test(arguments: tones.map(\.0), [48_000, 44_100])
    func tonesAtTheRightFrequencyAndLevel(_ name: String, commonRate: Int) throws {
        let tone = try #require(Self.tones.first { $0.0 == name })
        let (pcm, _) = try decodeAll(name, commonRate: commonRate)
        #expect(pcm.sampleRate == commonRate)
        let window = commonRate / 2..<commonRate / 2 + commonRate  // one second from 0.5 s
        let left = toneAmplitude(pcm.left, frequency: tone.1, rate: commonRate, range: window)
        let right = toneAmplitude(pcm.right, frequency: tone.2, rate: commonRate, range: window)
        #expect(abs(left - tone.3) < 0.02, "left \(left)")
        #expect(abs(right - tone.3) < 0.02, "right \(right)")
        if tone.1 != tone.2 {
            // No crosstalk: each channel carries only its own tone.
            #expect(toneAmplitude(pcm.left, frequency: tone.2, rate: commonRate, range: window) < 0.001)
            #expect(toneAmplitude(pcm.right, frequency: tone.1, rate: commonRate, range: window) < 0.001)
        }
    }

    /// With the LAME tag's delay and padding applied, the decoded length is the source's exactly (ffmpeg decodes
    /// the same counts: 132 300, 96 000, 44 100 and 88 200 samples), resampled to the common rate.
    @Test(arguments: [
        ("stereo-44k-128k.mp3", 3.0), ("mono-48k.mp3", 2.0), ("stereo-22k.mp3", 2.0),
        ("id3-xing-vbr.mp3", 2.0),
    ])
    func gaplessLength(_ name: String, seconds: Double) throws {
        let (pcm, reader) = try decodeAll(name)
        #expect(abs(Double(pcm.frameCount) - seconds * 48_000) <= 2, "\(pcm.frameCount) frames")
        #expect(reader.statistics.decodeErrors == 0)
        let (native, _) = try decodeAll(name, commonRate: 44_100)
        if name != "mono-48k.mp3" && name != "stereo-22k.mp3" {
            #expect(native.frameCount == Int(seconds * 44_100))  // no resampler: exact
        }
    }

    @Test func monoIsCopiedToBothChannels() throws {
        let (pcm, _) = try decodeAll("mono-48k.mp3")
        #expect(pcm.left == pcm.right)
        #expect(pcm.left.contains { $0 != 0 })
    }

    /// The rate and channel switch mid-stream: both parts decode to their tones, with no burst of noise between.
    @Test func rateSwitchReconfigures() throws {
        let (pcm, reader) = try decodeAll("rate-switch.mp3")
        #expect(reader.sourceRate == 48_000 && reader.sourceChannels == 1)
        // 59 frames at 44.1 kHz → 48 kHz, then 64 frames at 48 kHz, give or take the resampler's edges.
        let expected = 59.0 * 1152 * 48_000 / 44_100 + 64 * 1152
        #expect(abs(Double(pcm.frameCount) - expected) < 64, "\(pcm.frameCount) vs \(expected)")
        let firstPart = 12_000..<48_000
        let secondPart = pcm.frameCount - 48_000..<pcm.frameCount - 12_000
        #expect(abs(toneAmplitude(pcm.left, frequency: 440, rate: 48_000, range: firstPart) - 0.475) < 0.03)
        #expect(abs(toneAmplitude(pcm.left, frequency: 880, rate: 48_000, range: secondPart) - 0.475) < 0.03)
        #expect(abs(toneAmplitude(pcm.right, frequency: 880, rate: 48_000, range: secondPart) - 0.475) < 0.03)
        // No sample anywhere beyond the tones' peak (a burst of noise or a glitch at the switch would show).
        let peak = pcm.left.map(abs).max() ?? 0
        #expect(peak < 0.6, "peak \(peak)")
    }

    @Test func garbageCostsNoNoise() throws {
        let (pcm, _) = try decodeAll("garbage-spliced.mp3")
        #expect(
            pcm.frameCount == 114 * 1152 * 48_000 / 44_100 || abs(pcm.frameCount - 114 * 1152 * 48_000 / 44_100) < 4)
        let peak = max(pcm.left.map(abs).max() ?? 0, pcm.right.map(abs).max() ?? 0)
        #expect(peak < 0.6, "peak \(peak)")
    }

    @Test func rejectsAnUnsupportedCommonRate() {
        #expect(throws: ConfigurationError.self) { try Reader(commonRate: 32_000) }
    }
}

@Suite struct LiveParsingTests {
    /// Live relaying hands frames on unconfirmed: the two damaged frames of the garbage fixture reach the decoder.
    /// They must cost at most their own 26 ms each, not a burst of noise.
    @Test func damagedFramesPassedOnUnconfirmedStayQuiet() throws {
        let (packets, _, _) = parseAll(try Fixture.bytes("garbage-spliced.mp3"), confirmsFrames: false)
        let reader = try Reader()
        var pcm = PCMBuffer(sampleRate: 48_000)
        for packet in packets { pcm.append(try reader.read(packet)) }
        pcm.append(try reader.finish())
        let peak = max(pcm.left.map(abs).max() ?? 0, pcm.right.map(abs).max() ?? 0)
        #expect(peak < 0.6, "peak \(peak)")
    }
}

/// A looping file's seam (a fallback's loop): each pass decoded with its LAME tag's delay and padding trimmed, the
/// last frame and the Reader's tail handed on at the pass's end. `mono-48k.mp3` is 2.000 s of 660 Hz (1 320 whole
/// cycles, at the common rate: no resampler), so two passes make 4.000 s of one unbroken tone.
@Suite struct LoopSeamTests {
    static func twoPasses(gapless: Bool) throws -> [Float] {
        var configuration = InputDecoder.Configuration()
        configuration.confirmsFrames = false
        configuration.gapless = gapless
        let decoder = InputDecoder(configuration)
        let bytes = try Fixture.bytes("mono-48k.mp3")
        var out: [Float] = []
        func sink(_ output: InputDecoder.Output) {
            if case .pcm(let pcm) = output { out += pcm.left }
        }
        for _ in 0..<2 {
            decoder.restart(metaInterval: nil)
            // In the pieces a file input reads (16 KiB), then the pass's end.
            for start in stride(from: 0, to: bytes.count, by: 16_384) {
                try Array(bytes[start..<min(bytes.count, start + 16_384)]).withUnsafeBytes {
                    try decoder.feed($0, sink)
                }
            }
            try decoder.endPass(sink)
        }
        #expect(decoder.readersMade == 1, "the passes of one loop count as one Reader")
        #expect(decoder.decoded.packets == decoder.parser.statistics.packets, "every pass's packets decoded")
        return out
    }

    @Test func theSeamHasNoHoleAndNoStep() throws {
        let natural: Float = 0.475 * 2 * Float.pi * 660 / 48_000
        let looped = try Self.twoPasses(gapless: true)
        #expect(looped.count == 2 * 96_000, "\(looped.count) frames: two passes of exactly 2 s")
        let steps = zip(looped, looped.dropFirst()).map { abs($1 - $0) }
        let seam = steps[95_900..<96_100].max() ?? 0
        let elsewhere = steps[48_000..<95_000].max() ?? 0
        #expect(seam < 1.1 * max(elsewhere, natural), "a step of \(seam) at the seam, \(elsewhere) elsewhere")
        // No quiet stretch at the seam: the tone's level in every 5 ms around it.
        for start in stride(from: 95_520, to: 96_480, by: 240) {
            let level = toneAmplitude(looped, frequency: 660, rate: 48_000, range: start..<start + 240)
            #expect(level > 0.3, "level \(level) at frame \(start)")
        }
        // Without the trimming (a live stream's decoding) the same loop has a hole: the test can fail.
        let plain = try Self.twoPasses(gapless: false)
        #expect(plain.count > looped.count + 1_000)
        let quiet = stride(from: 95_000, to: min(plain.count, 99_000) - 240, by: 240).contains { start in
            toneAmplitude(plain, frequency: 660, rate: 48_000, range: start..<start + 240) < 0.1
        }
        #expect(quiet, "the untrimmed loop has a quiet stretch at its seam")
    }
}
