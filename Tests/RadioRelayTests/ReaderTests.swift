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
