import Foundation
import Testing

@testable import RadioRelayMedia

/// The true-peak limiter before the encoders (`true_peak`): its envelope on blocks (a pure value), and the limiter
/// on signals whose true peak is measured by libebur128 after it.
@Suite struct LimiterTests {
    static let rate = 48_000

    static func sine(
        _ frequency: Double, amplitude: Double, seconds: Double, rate: Int = LimiterTests.rate, phase: Double = 0.3
    ) -> PCMBuffer {
        let frames = Int(seconds * Double(rate))
        let samples = (0..<frames).map {
            Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(rate) + phase))
        }
        return PCMBuffer(left: samples, right: samples, sampleRate: rate)
    }

    /// Runs `input` through a limiter in pieces of `piece` frames; returns what came out and the limiter.
    static func limit(_ input: PCMBuffer, ceiling: Double = -1, piece: Int = 960) throws -> (
        PCMBuffer, TruePeakLimiter
    ) {
        let limiter = try #require(TruePeakLimiter(ceiling: ceiling, rate: input.sampleRate))
        var out = PCMBuffer(sampleRate: input.sampleRate)
        var start = 0
        while start < input.frameCount {
            let end = min(input.frameCount, start + piece)
            var part = PCMBuffer(
                left: Array(input.left[start..<end]), right: Array(input.right[start..<end]),
                sampleRate: input.sampleRate)
            limiter.process(&part)
            out.append(part)
            start = end
        }
        return (out, limiter)
    }

    static func dBTP(_ buffer: PCMBuffer) throws -> Double {
        let meter = try #require(TruePeakMeter(rate: buffer.sampleRate))
        return 20 * log10(Double(meter.measure(buffer)))
    }

    /// THD+N of `samples` around a sine of `frequency`: what is left after the best-fitting sine is taken out, over
    /// that sine, in percent.
    static func distortion(_ samples: ArraySlice<Float>, frequency: Double, rate: Int = LimiterTests.rate) -> Double {
        var sinSum = 0.0
        var cosSum = 0.0
        for (index, sample) in samples.enumerated() {
            let angle = 2 * Double.pi * frequency * Double(index) / Double(rate)
            sinSum += Double(sample) * sin(angle)
            cosSum += Double(sample) * cos(angle)
        }
        let a = 2 * sinSum / Double(samples.count)
        let b = 2 * cosSum / Double(samples.count)
        var residual = 0.0
        for (index, sample) in samples.enumerated() {
            let angle = 2 * Double.pi * frequency * Double(index) / Double(rate)
            let left = Double(sample) - a * sin(angle) - b * cos(angle)
            residual += left * left
        }
        let fundamental = (a * a + b * b) / 2 * Double(samples.count)
        return 100 * (residual / fundamental).squareRoot()
    }

    /// A block that needs 6 dB less is met by a gain already down when it arrives (a ramp over the look-ahead before
    /// it, no step), held, then released towards 1.
    @Test func theEnvelopeIsDownBeforeAPeakHoldsThenReleases() {
        var envelope = LimiterEnvelope(lookahead: 10, hold: 20, release: 100)
        var gains: [Float] = []  // the gain of each block's first and last sample, in the order given out
        var lasts: [Float] = []
        for block in 0..<400 {
            envelope.push(block == 50 ? 0.5 : 1)
            guard envelope.pushed > envelope.delayBlocks else { continue }
            gains.append(envelope.sampleGain(offset: 0, blockFrames: 8))
            lasts.append(envelope.sampleGain(offset: 7, blockFrames: 8))
        }
        // Blocks are given out `delayBlocks` late: gains[i] is block i's.
        #expect(gains[50] <= 0.5 && lasts[50] <= 0.5 && gains[49] <= 0.5 && lasts[51] <= 0.5)
        #expect(gains[38] == 1, "untouched well before the peak")
        for block in 39..<50 { #expect(gains[block] < gains[block - 1] || gains[block] == 0.5, "a ramp down") }
        #expect(lasts[48] < gains[48] || lasts[48] == 0.5)
        // Held for 20 blocks after the last block that needed it (52 = 50 + 2: its neighbours'), then up.
        #expect(gains[70] == 0.5)
        #expect(gains[90] > 0.5 && gains[90] < 1)
        #expect(gains[380] > 0.95)
        for block in 80..<380 { #expect(gains[block + 1] >= gains[block], "a release only rises") }
        // Hostile requirements: nothing above 1, nothing below 0, nothing not finite.
        var odd = LimiterEnvelope(lookahead: 1, hold: 0, release: .nan)
        for value: Float in [.nan, .infinity, -1, 2, -.infinity] { odd.push(value) }
        #expect(odd.gain >= 0 && odd.gain <= 1)
        #expect(LimiterEnvelope.required(peak: .nan, ceiling: 0.9) == 0)
        #expect(LimiterEnvelope.required(peak: 0.5, ceiling: 0.9) == 1)
    }

    /// Under the ceiling the limiter is a delay and nothing else: every sample comes out as it went in, `delay`
    /// frames later, and a silence after it brings out its tail.
    @Test func underTheCeilingItOnlyDelays() throws {
        let input = Self.sine(997, amplitude: 0.8, seconds: 0.5)  // −1.9 dBFS, its true peak under −1 dBTP
        let (out, limiter) = try Self.limit(input, piece: 333)
        #expect(limiter.delay >= 80 && limiter.delay <= 120, "about 2 ms at 48 kHz: \(limiter.delay)")
        #expect(out.left.prefix(limiter.delay).allSatisfy { $0 == 0 })
        // The stream's first 2 ms fade in (before them was silence at no gain); after, it is the input, delayed.
        let fade = 2 * limiter.delay
        #expect(
            Array(out.left.dropFirst(limiter.delay + fade)) == Array(input.left.dropFirst(fade).dropLast(limiter.delay))
        )
        #expect(limiter.limitedFrames == 0 && limiter.reduction == 0)
        var tail = PCMBuffer.silence(frames: limiter.delay, sampleRate: Self.rate)
        #expect(!limiter.isIdle)
        limiter.process(&tail)
        #expect(tail.left == Array(input.left.suffix(limiter.delay)))
        #expect(limiter.isIdle)
    }

    /// A source clipped 3 dB over full scale, and full-scale square waves (whose true peak is far over their
    /// samples'): after the limiter, the true peak is at the ceiling, however the audio is cut into pieces.
    @Test func aClippedSourceLeavesAtTheCeiling() throws {
        let hot = Self.sine(1000, amplitude: pow(10, 3.0 / 20), seconds: 1)
        var clipped = hot
        clipped.left = hot.left.map { min(1, max(-1, $0 * 1.4)) }
        clipped.right = clipped.left
        let square = PCMBuffer(
            left: (0..<48_000).map { $0 % 20 < 10 ? 1 : -1 }, right: (0..<48_000).map { $0 % 14 < 7 ? 1 : -1 },
            sampleRate: Self.rate)
        var burst = PCMBuffer.silence(frames: 4_800, sampleRate: Self.rate)
        burst.append(Self.sine(5_000, amplitude: 2, seconds: 0.05))  // +6 dBFS out of silence, no warning
        burst.append(.silence(frames: 4_800, sampleRate: Self.rate))
        for (name, input) in [("+3 dBFS sine", hot), ("clipped", clipped), ("squares", square), ("burst", burst)] {
            for piece in [1, 7, 480, 4096] {
                let (out, limiter) = try Self.limit(input, piece: piece)
                let peak = try Self.dBTP(out)
                if piece == 480 { print("limiter, \(name): \(try Self.dBTP(input)) dBTP in, \(peak) dBTP out") }
                #expect(peak <= -1.0 + 0.05, "\(name) in pieces of \(piece): \(peak) dBTP")
                #expect(peak > -1.6, "\(name): no more reduction than needed: \(peak)")
                #expect(limiter.limitedFrames > 0 && limiter.reduction < -1)
            }
        }
    }

    /// A sine held 6 dB over the ceiling is brought down by a steady gain, not modulated by it: its distortion
    /// through the limiter stays under 0.1 % from 40 Hz to 15 kHz, the range a sweep covers (the hold outlasts half a
    /// period down to 17 Hz).
    @Test func aLoudSineIsNotDistorted() throws {
        for frequency in [40.0, 100, 440, 1000, 3000, 8000, 15000] {
            let input = Self.sine(frequency, amplitude: 2 * pow(10, -1.0 / 20), seconds: 1.5)
            let (out, limiter) = try Self.limit(input)
            let settled = out.left[36_000..<72_000]
            let thd = Self.distortion(settled, frequency: frequency)
            #expect(thd < 0.1, "\(frequency) Hz: \(thd) %")
            print("limiter, sine \(Int(frequency)) Hz at +5 dBFS: THD+N \(thd) %, reduction \(limiter.reduction) dB")
            #expect(abs(limiter.reduction - -6.0) < 0.7, "\(frequency) Hz: \(limiter.reduction) dB")
        }
    }

    /// A logarithmic sine sweep from 40 Hz to 16 kHz held 6 dB over the ceiling: what comes out is the sweep brought
    /// down by one steady gain. Its THD+N (what differs from the input, delayed and scaled by the best-fitting gain,
    /// over that) stays under 0.1 % once the first peak set the gain.
    @Test func aSweepThroughTheLimiterIsOnlyScaled() throws {
        let seconds = 4.0
        let frames = Int(seconds * Double(Self.rate))
        let (low, high) = (40.0, 16_000.0)
        let k = log(high / low)
        let amplitude = 2 * pow(10, -1.0 / 20)
        let samples = (0..<frames).map { index -> Float in
            let t = Double(index) / Double(Self.rate)
            return Float(amplitude * sin(2 * Double.pi * low * seconds / k * (exp(t / seconds * k) - 1)))
        }
        let (out, limiter) = try Self.limit(PCMBuffer(left: samples, right: samples, sampleRate: Self.rate))
        // Fitted window by window (100 ms): a true peak measured 4x oversampled reads a little higher near the top
        // of the band, so the gain drifts by a few tenths of a dB over the sweep, a level, not a distortion.
        let delay = limiter.delay
        var residual = 0.0
        var signal = 0.0
        var gains: [Double] = []
        for start in stride(from: 4_800, to: frames - delay - 4_800, by: 4_800) {
            let window = start..<(start + 4_800)
            var cross = 0.0
            var power = 0.0
            for index in window {
                cross += Double(out.left[index + delay]) * Double(samples[index])
                power += Double(samples[index]) * Double(samples[index])
            }
            let gain = cross / power
            gains.append(20 * log10(gain))
            for index in window {
                let difference = Double(out.left[index + delay]) - gain * Double(samples[index])
                residual += difference * difference
            }
            signal += gain * gain * power
        }
        let thd = 100 * (residual / signal).squareRoot()
        let (least, most) = (gains.min() ?? 0, gains.max() ?? 0)
        print("limiter, sweep 40 Hz-16 kHz at +5 dBFS: gain \(least) to \(most) dB, THD+N \(thd) %")
        #expect(thd < 0.1, "\(thd) %")
        #expect(least > -6.7 && most < -5.3, "\(least) … \(most)")
    }

    /// After a peak, the gain holds for 30 ms, then comes back with a time constant of 150 ms: a quiet passage after a
    /// loud one is back to full level within a second, without a jump.
    @Test func theGainComesBackAfterAPeak() throws {
        var input = Self.sine(440, amplitude: 1.8, seconds: 0.2)
        input.append(Self.sine(440, amplitude: 0.3, seconds: 3.5))
        let (out, limiter) = try Self.limit(input)
        let delay = limiter.delay
        func level(at seconds: Double) -> Float {
            let start = Int(seconds * Double(Self.rate)) + delay
            return out.left[start..<(start + 480)].map(abs).max() ?? 0
        }
        #expect(level(at: 0.215) < 0.3 * 0.7, "held just after the loud part")
        #expect(level(at: 0.5) > level(at: 0.3) && level(at: 0.3) > level(at: 0.215))
        #expect(level(at: 1.5) > 0.3 * 0.98, "back to full level")
        #expect(limiter.reduction == 0, "nothing reduced over the last 2 s")
    }
}
