/// The true-peak limiter before the Encoders (`true_peak = dBTP`): every buffer any Encoder gets passes it first,
/// so every output is limited alike, and silence keeps the stream's timing through it.
extension StageChain {
    /// A ceiling in dBTP (nil: no limiter), in place: a running limiter keeps its audio and gain. `lowLatency`: the
    /// short look-ahead (set when the limiter is made).
    package func setLimiter(ceiling: Double?, lowLatency: Bool = false) {
        guard let ceiling else {
            limiter = nil
            return
        }
        if let limiter {
            limiter.update(ceiling: ceiling)
        } else {
            limiter = TruePeakLimiter(
                ceiling: ceiling, rate: configuration.commonRate,
                lookahead: lowLatency ? TruePeakLimiter.shortLookahead : TruePeakLimiter.lookahead)
        }
    }

    /// `buffer` through the limiter, if there is one.
    func limited(_ buffer: PCMBuffer) -> PCMBuffer {
        guard let limiter else { return buffer }
        var out = buffer
        limiter.process(&out)
        return out
    }

    /// Silence of up to `frames` to go through the limiter while it still holds audio (its delay), so the audio
    /// comes out before the silence after it; nil when it holds none (silence then goes straight to the Encoders).
    func flushLimiter(frames: Int) -> PCMBuffer? {
        guard let limiter, !limiter.isIdle, frames > 0 else { return nil }
        return PCMBuffer.silence(frames: min(frames, limiter.delay), sampleRate: configuration.commonRate)
    }
}
