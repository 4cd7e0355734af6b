import Glibc

/// The gain of the true-peak limiter (`TruePeakLimiter`), as a pure value on blocks of samples (tests:
/// `LimiterEnvelopeTests`). Each block brings the gain it requires (the ceiling over its true peak, 1 when under
/// it); the envelope answers with the gain of the block `lookahead + 1` behind, so the gain is already down when a
/// peak arrives, and comes back up slowly after it:
/// - **Attack within the look-ahead.** A block's gain is at most the least required by the blocks from 2 before it
///   to `lookahead + 1` after it; the gain of a sample is the average of its block's gain and the `lookahead - 1`
///   before it (a ramp, never a step), and every one of them is at most what the sample's block and its neighbours
///   require. So no sample leaves louder than its ceiling allows, whatever arrives.
/// - **Hold, then release.** After a reduction the gain holds for `holdBlocks` (longer than half a period of the
///   lowest tone a station carries, so a loud low note is not modulated at its own frequency: distortion), then
///   returns towards 1 exponentially (`releaseStep` of the way per block: a time constant of about 150 ms, no
///   pumping).
package struct LimiterEnvelope: Sendable, Equatable {
    /// Blocks the gain looks ahead.
    package let lookahead: Int
    /// Blocks the gain holds after the last block that needed it.
    package let holdBlocks: Int
    /// Fraction of the way back to 1 the gain goes per block once the hold is over.
    package let releaseStep: Float

    /// Required gains of the last `lookahead + 4` blocks (the newest last once `pushed` wraps: a ring).
    private var required: [Float]
    /// Gains of the last `lookahead + 1` blocks given out (a ring).
    private var given: [Float]
    /// The sum of the gains given out between the newest and the oldest of the ring (the `lookahead - 1` blocks every
    /// sample of the newest averages over whole), set with the ring.
    private var middle: Float
    /// Blocks pushed.
    package private(set) var pushed = 0
    private var hold = 0
    /// The gain of the last block given out.
    package private(set) var gain: Float = 1

    /// - Parameters: `lookahead` ≥ 1 blocks; `hold` and `release` in blocks (`release`: the time constant).
    package init(lookahead: Int, hold: Int, release: Double) {
        self.lookahead = max(1, lookahead)
        holdBlocks = max(0, hold)
        releaseStep = release.isFinite && release > 1 ? Float(1 - exp(-1 / release)) : 1
        required = Array(repeating: 1, count: self.lookahead + 4)
        // Before the first block there was silence, at no gain: the first blocks' audio fades in over the
        // look-ahead, so the average over blocks never pushed stays under what the first blocks require.
        given = Array(repeating: 0, count: self.lookahead + 1)
        middle = 0
    }

    /// Blocks between a block's arrival and its gain: a limiter delays its audio by this many blocks and one more (the
    /// block being filled).
    package var delayBlocks: Int { lookahead + 1 }

    /// The gain a block of true peak `peak` (linear) requires under `ceiling` (linear).
    package static func required(peak: Float, ceiling: Float) -> Float {
        guard peak.isFinite else { return 0 }
        return peak > ceiling ? max(0, ceiling / peak) : 1
    }

    /// Takes the next block's required gain; once `delayBlocks` have come, the gains of the samples of the block
    /// that many behind are ready: `sampleGain`.
    package mutating func push(_ requirement: Float) {
        required[pushed % required.count] = requirement.isFinite ? min(1, max(0, requirement)) : 0
        pushed += 1
        guard pushed > delayBlocks else { return }
        // The block given out now is the one `delayBlocks` behind the newest: the least required from 2 blocks before
        // it (a true peak is found a few samples after its sample) to the newest.
        let least = required.min() ?? 1
        if least <= gain {
            gain = least
            hold = holdBlocks
        } else if hold > 0 {
            hold -= 1
        } else {
            gain = min(least, gain + (1 - gain) * releaseStep)
            // Within 0.01 dB of unity it is unity (an exponential never gets there on its own).
            if gain > 0.999 && least >= 1 { gain = 1 }
        }
        let newest = pushed - delayBlocks - 1
        given[newest % given.count] = gain
        middle = 0
        for back in 1..<lookahead { middle += given[(newest - back + given.count * 2) % given.count] }
    }

    /// The gain of sample `offset` (0..<`blockFrames`) of the last block given out: the average of the gains over the
    /// `lookahead` blocks' worth of samples that end at it.
    package func sampleGain(offset: Int, blockFrames: Int) -> Float {
        let newest = pushed - delayBlocks - 1
        guard newest >= 0, blockFrames > 0 else { return 0 }
        let oldest = given[(newest - lookahead + given.count * 2) % given.count]
        let part = Float(min(blockFrames - 1, max(0, offset)) + 1)
        let total =
            Float(blockFrames) * middle + part * given[newest % given.count] + (Float(blockFrames) - part) * oldest
        return total / Float(blockFrames * lookahead)
    }
}
