import Glibc

/// The gain that brings one input to its station's loudness target, as a pure value on virtual time (tests:
/// `LoudnessGainTests`): each measurement of the input's gated loudness (`LoudnessMeter`) says what gain it wants —
/// the target less the loudness, within `range`, and never so much that the input's recent peak would pass
/// `peakCeiling` — and the gain moves towards it at `rate` dB per second of audio at most, so it never pumps. A
/// measurement with nothing above the gates (silence, a pause in speech) wants nothing: the gain holds.
package struct LoudnessGain: Sendable, Equatable {
    /// The loudness wanted, in LUFS.
    package var target: Double
    /// The gain in dB now.
    package private(set) var gain = 0.0
    /// The gain the last measurement wants (nil before one with audio above the gates).
    package private(set) var wanted: Double?
    /// The input's recent sample peak in dBFS, decaying by `peakDecay` dB per second while nothing louder comes.
    package private(set) var peak = -Double.infinity

    /// The gains it may take: enough to bring −36 LUFS up to −16, or −4 down.
    package static let range = -12.0...20.0
    /// dB per second the gain moves at most.
    package static let rate = 3.0
    /// The highest level a sample peak may be taken to (dBFS): `ceiling(limiter:)`.
    package var peakCeiling: Double
    /// How far above its ceiling a true-peak limiter after the gain may be sent: the limiter takes at most this
    /// much off the loudest peaks of a quiet input brought up (more would be heard as squashed).
    package static let limiterAllowance = 6.0
    /// How fast a remembered peak fades (dB per second).
    package static let peakDecay = 0.5
    /// BS.1770's gates: absolute (LUFS) and relative (LU below the ungated level).
    package static let absoluteGate = -70.0
    package static let relativeGate = 10.0

    package init(target: Double, peakCeiling: Double = LoudnessGain.ceiling(limiter: nil)) {
        self.target = target
        self.peakCeiling = peakCeiling
    }

    /// The peak ceiling of the gain: `limiterAllowance` over a limiter's ceiling (dBTP), or −1 dBFS without one (the
    /// gain alone must not clip).
    package static func ceiling(limiter: Double?) -> Double {
        limiter.map { $0 + limiterAllowance } ?? -1
    }

    /// Whether the input is in a pause now: its momentary loudness is under the relative gate (10 LU below its gated
    /// loudness, BS.1770's) or the absolute one. The gain holds while it is.
    package private(set) var paused = false

    /// Notes a measurement: the gated loudness (nil: nothing above the gates), the momentary loudness (nil: digital
    /// silence) and the sample peak of the audio since the last one (linear, full scale 1.0).
    package mutating func measured(
        loudness: Double?, momentary: Double?, peak samplePeak: Double, seconds: Double
    ) {
        if let loudness, loudness.isFinite, let momentary, momentary.isFinite {
            paused = momentary < max(Self.absoluteGate, loudness - Self.relativeGate)
        } else {
            paused = momentary == nil && loudness != nil
        }
        let fresh = samplePeak > 0 && samplePeak.isFinite ? 20 * log10(samplePeak) : -Double.infinity
        let decayed = peak - Self.peakDecay * max(0, seconds.isFinite ? seconds : 0)
        peak = max(fresh, decayed)
        guard let loudness, loudness.isFinite else { return }
        var want = min(Self.range.upperBound, max(Self.range.lowerBound, target - loudness))
        if peak.isFinite { want = min(want, peakCeiling - peak) }
        wanted = max(Self.range.lowerBound, want)
    }

    /// Moves the gain towards what is wanted over `seconds` of audio; returns the gain before and after, in dB.
    package mutating func advance(seconds: Double) -> (from: Double, to: Double) {
        let before = gain
        guard let wanted, !paused, seconds.isFinite, seconds > 0 else { return (before, before) }
        let step = Self.rate * seconds
        gain = wanted > gain ? min(wanted, gain + step) : max(wanted, gain - step)
        return (before, gain)
    }

    /// Multiplies `buffer` by the gain, going linearly from `from` to `to` dB across it (no step within a buffer).
    package static func apply(_ buffer: inout PCMBuffer, from: Double, to: Double) {
        let frames = min(buffer.left.count, buffer.right.count)
        guard frames > 0, from != 0 || to != 0 else { return }
        let start = Float(pow(10, from / 20))
        let end = Float(pow(10, to / 20))
        let step = (end - start) / Float(frames)
        for index in 0..<frames {
            let factor = start + step * Float(index + 1)
            buffer.left[index] *= factor
            buffer.right[index] *= factor
        }
    }
}
