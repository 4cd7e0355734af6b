import Glibc

/// The true-peak limiter before a station's encoders (`true_peak = dBTP`): the audio is delayed by `delay` frames
/// (about 2 ms) while libebur128 measures the true peak (BS.1770's 4× oversampled peak, the inter-sample peaks a
/// decoder's reconstruction shows) of each block of `blockFrames`, and `LimiterEnvelope` turns what the blocks
/// require into a gain that is down before a peak arrives and back up about 150 ms after it. Both channels take the
/// same gain (the stereo image stays). Silence through an idle limiter is passed as it is (`isIdle`).
///
/// Confined to the thread that feeds it (a station's pipeline).
package final class TruePeakLimiter {
    private let meter: TruePeakMeter
    package let rate: Int
    /// The ceiling, in dBTP, and linear.
    package private(set) var ceiling: Double
    private var linearCeiling: Float
    private var envelope: LimiterEnvelope
    /// Frames per measured block.
    package static let blockFrames = 8
    /// The look-ahead (`shortLookahead` in low-latency mode), the hold and the release time constant, in seconds.
    package static let lookahead = 0.0016
    package static let shortLookahead = 0.0005
    package static let hold = 0.03
    package static let release = 0.15

    /// Frames of audio history: `delay` plus a block, rounded up to a power of two.
    private let mask: Int
    private var left: [Float]
    private var right: [Float]
    private var gains: [Float]
    /// Frames taken in so far.
    private var written = 0
    /// Frames given out below unity gain (the stream's first fade-in aside).
    package private(set) var limitedFrames = 0
    /// The least gain given out in this second of audio and in the one before (`reduction`).
    private var leastNow: Float = 1
    private var leastBefore: Float = 1
    private var framesThisSecond = 0
    /// Frames since the last one that was not silent, or that was reduced (idle once past `delay`).
    private var quietFrames = Int.max / 2

    /// Nil when libebur128 refuses the rate or cannot allocate.
    package init?(ceiling: Double, rate: Int, lookahead: Double = TruePeakLimiter.lookahead) {
        guard let meter = TruePeakMeter(rate: rate) else { return nil }
        self.meter = meter
        self.rate = rate
        self.ceiling = ceiling
        linearCeiling = Float(pow(10, ceiling / 20))
        let blockSeconds = Double(Self.blockFrames) / Double(rate)
        envelope = LimiterEnvelope(
            lookahead: max(1, Int((min(0.01, max(0, lookahead)) / blockSeconds).rounded(.up))),
            hold: Int((Self.hold / blockSeconds).rounded()), release: Self.release / blockSeconds)
        let history = (envelope.delayBlocks + 2) * Self.blockFrames
        var size = 1
        while size < history { size *= 2 }
        mask = size - 1
        left = Array(repeating: 0, count: size)
        right = Array(repeating: 0, count: size)
        gains = Array(repeating: 1, count: size)
    }

    /// Frames between a sample's arrival and its leaving.
    package var delay: Int { (envelope.delayBlocks + 1) * Self.blockFrames }

    /// A new ceiling (a reload), in place: the next blocks are measured against it.
    package func update(ceiling: Double) {
        self.ceiling = ceiling
        linearCeiling = Float(pow(10, ceiling / 20))
    }

    /// Whether all it holds is silence: silence through it comes out as silence, at once (`passSilence`).
    package var isIdle: Bool { quietFrames >= delay }

    private func nextSecond() {
        leastBefore = leastNow
        leastNow = 1
        framesThisSecond = 0
    }

    /// Silence went by without passing through (it is idle): its time releases the gain as if it had.
    package func passSilence(frames: Int) {
        framesThisSecond = framesThisSecond &+ max(0, frames)
        if framesThisSecond >= rate {
            nextSecond()
            if frames >= rate { nextSecond() }
        }
        guard isIdle, envelope.gain < 1 else { return }
        var blocks = min(
            frames / Self.blockFrames, envelope.holdBlocks + 20 * Int(Self.release * Double(rate)) / Self.blockFrames)
        while blocks > 0 && envelope.gain < 1 {
            envelope.push(1)
            blocks -= 1
        }
    }

    /// The deepest gain reduction over the last one to two seconds of audio, in dB (0: none; −20 at most shown).
    package var reduction: Double {
        let least = min(leastNow, leastBefore)
        return least >= 1 ? 0 : max(-20, 20 * log10(Double(max(least, 1e-6))))
    }

    /// Seconds of audio given out below unity gain.
    package var limitedSeconds: Double { Double(limitedFrames) / Double(rate) }

    /// `buffer`, `delay` frames later and limited: as many frames come out as go in.
    package func process(_ buffer: inout PCMBuffer) {
        let frames = min(buffer.left.count, buffer.right.count)
        for index in 0..<frames {
            let slot = written & mask
            let l = buffer.left[index]
            let r = buffer.right[index]
            left[slot] = l
            right[slot] = r
            quietFrames = l == 0 && r == 0 ? quietFrames &+ 1 : 0
            written += 1
            if written % Self.blockFrames == 0 { measureBlock() }
            let out = written - 1 - delay
            guard out >= 0 else {
                buffer.left[index] = 0
                buffer.right[index] = 0
                continue
            }
            let gain = gains[out & mask]
            buffer.left[index] = left[out & mask] * gain
            buffer.right[index] = right[out & mask] * gain
            framesThisSecond += 1
            if framesThisSecond >= rate { nextSecond() }
        }
    }

    /// The block just completed is measured; the gains of the block `delayBlocks` behind it are set.
    private func measureBlock() {
        let peak = meter.measure(
            left: left, right: right, start: written - Self.blockFrames, frames: Self.blockFrames, mask: mask)
        envelope.push(LimiterEnvelope.required(peak: peak, ceiling: linearCeiling))
        if envelope.gain < 1 {
            limitedFrames &+= Self.blockFrames
            leastNow = min(leastNow, envelope.gain)
        }
        let block = written / Self.blockFrames - 1 - envelope.delayBlocks
        guard block >= 0 else { return }
        for offset in 0..<Self.blockFrames {
            gains[(block * Self.blockFrames + offset) & mask] = envelope.sampleGain(
                offset: offset, blockFrames: Self.blockFrames)
        }
    }
}

@available(*, unavailable) extension TruePeakLimiter: Sendable {}
