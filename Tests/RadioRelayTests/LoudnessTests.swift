import Foundation
import Testing

@testable import RadioRelayMedia

/// An input's loudness stage: libebur128's gated loudness over a bounded window (`LoudnessMeter`), and the gain rule
/// on virtual time (`LoudnessGain`): bounded rate and range, never past the peak ceiling, holding through silence.
@Suite struct LoudnessTests {
    static let rate = 48_000

    /// `seconds` of a `frequency` Hz sine of `amplitude` (linear) on both channels, in buffers of 20 ms.
    static func tone(_ seconds: Double, amplitude: Float, frequency: Double = 1_000) -> [PCMBuffer] {
        let frames = Int(seconds * Double(rate))
        var buffers: [PCMBuffer] = []
        var start = 0
        while start < frames {
            let count = min(960, frames - start)
            let samples = (start..<start + count).map {
                amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / Double(rate)))
            }
            buffers.append(PCMBuffer(left: samples, right: samples, sampleRate: rate))
            start += count
        }
        return buffers
    }

    /// A 1 kHz sine at −20 dBFS on both channels is −20 LUFS (BS.1770: at 0 dBFS in one channel, −3.01); silence is
    /// below the gates; the window forgets what played more than its length ago.
    @Test func theMeterReadsBS1770AndForgets() throws {
        let meter = try #require(LoudnessMeter(rate: Self.rate, window: 10))
        #expect(meter.loudness == nil)
        for buffer in Self.tone(5, amplitude: 0) { meter.feed(buffer) }
        #expect(meter.loudness == nil, "digital silence is gated out")
        for buffer in Self.tone(5, amplitude: 0.1) { meter.feed(buffer) }
        let loud = try #require(meter.loudness)
        #expect(abs(loud - -20) < 0.2, "\(loud)")
        for buffer in Self.tone(15, amplitude: 0.01) { meter.feed(buffer) }
        let later = try #require(meter.loudness)
        #expect(abs(later - -40) < 0.5, "10 s later the −20 LUFS part has left the window: \(later)")
        // A buffer at another rate is not measured (and does not crash).
        meter.feed(PCMBuffer(left: [1, 1], right: [1, 1], sampleRate: 44_100))
        #expect(LoudnessMeter(rate: 0) == nil && LoudnessMeter(rate: -5) == nil)
    }

    @Test func theGainMovesAtItsRateWithinItsRangeAndUnderThePeakCeiling() {
        var gain = LoudnessGain(target: -16)
        #expect(gain.advance(seconds: 1) == (0, 0), "no measurement: no move")
        // A pause (momentary under the relative gate): what it wants is noted, the gain holds.
        gain.measured(loudness: -30, momentary: -45, peak: 0.1, seconds: 0.5)
        #expect(gain.paused && gain.advance(seconds: 1) == (0, 0))
        gain.measured(loudness: -30, momentary: -30, peak: 0.1, seconds: 0.5)  // peak −20 dBFS: up to +19 allowed
        #expect(gain.wanted == 14)
        #expect(gain.advance(seconds: 1) == (0, 3))
        for _ in 0..<9 { _ = gain.advance(seconds: 0.5) }
        #expect(gain.gain == 14, "14 dB at 3 dB/s: there in under 5 s, and no further")
        // A louder input brings it down at the same rate; the range bounds it.
        gain.measured(loudness: 0, momentary: 0, peak: 0.5, seconds: 0.5)
        #expect(gain.wanted == -12)
        #expect(gain.advance(seconds: 2) == (14, 8))
        // A quiet input with hot peaks: the gain stops where its peak would pass −1 dBFS.
        var peaky = LoudnessGain(target: -16)
        peaky.measured(loudness: -40, momentary: -40, peak: 0.5, seconds: 0.5)  // peak −6 dBFS
        #expect(abs((peaky.wanted ?? 0) - (-1 - 20 * log10(0.5))) < 0.001)
        // Hostile numbers: nothing moves, nothing traps.
        var odd = LoudnessGain(target: -16)
        odd.measured(loudness: .nan, momentary: .nan, peak: .infinity, seconds: .nan)
        #expect(odd.wanted == nil && odd.advance(seconds: .infinity) == (0, 0) && odd.advance(seconds: -1) == (0, 0))
    }

    /// Speech with pauses: the gain climbs while the input speaks and holds through every pause (the gates leave
    /// the pauses out of the loudness), instead of pumping up the room noise.
    @Test func theGainHoldsThroughPauses() throws {
        let stage = try #require(InputLoudness(target: -16, limiter: nil, rate: Self.rate))
        let output = try #require(LoudnessMeter(rate: Self.rate, window: 6))
        var table: [(second: Int, gain: Double)] = []
        for second in 0..<30 {
            let speaking = second % 3 != 2  // two seconds of "speech", one of pause
            for buffer in Self.tone(1, amplitude: speaking ? 0.02 : 0.0002, frequency: 440) {
                output.feed(stage.process(buffer))
            }
            table.append((second + 1, stage.gain.gain))
        }
        let shown = table.map { "\($0.second) s \(Int($0.gain.rounded())) dB" }.joined(separator: ", ")
        print("gain by second (speech −35 LUFS, pauses −75): \(shown)")
        for (index, row) in table.enumerated() where (row.second - 1) % 3 == 2 && index > 0 {
            // Over a pause second, the gain rises only until the pause is noticed: once the momentary loudness's
            // 400 ms window has left the speech, at the next measurement.
            #expect(row.gain <= table[index - 1].gain + LoudnessGain.rate * (0.4 + InputLoudness.interval) + 0.01)
        }
        let settled = try #require(output.loudness)
        #expect(abs(settled - -16) < 1.0, "the speech brought to −16 LUFS: \(settled)")
    }

    /// The gain is applied smoothly: a buffer goes from the old gain to the new one, never in a step.
    @Test func aBufferRampsFromOneGainToTheNext() {
        var buffer = PCMBuffer(left: [1, 1, 1, 1], right: [1, 1, 1, 1], sampleRate: Self.rate)
        LoudnessGain.apply(&buffer, from: 0, to: 20 * log10(2))
        #expect(buffer.left.map { ($0 * 100).rounded() / 100 } == [1.25, 1.5, 1.75, 2])
        #expect(buffer.right == buffer.left)
    }
}
