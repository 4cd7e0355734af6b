import RadioRelaySystem

/// One decoded input's loudness stage (`loudness = LUFS`): its audio measured (`LoudnessMeter`) and its gain moved
/// (`LoudnessGain`) as it is decoded, whether it plays or stands by, so that a hot standby is at the target before a
/// switch to it and an input switched away from and back keeps its gain. Applied to the common format before
/// anything reads the input's audio (the crossfade, the encoders, the kept audio a switch starts with); the level
/// meter of dead-air detection reads the audio before it.
///
/// Confined to the station's pipeline thread.
package final class InputLoudness {
    private let meter: LoudnessMeter
    package private(set) var gain: LoudnessGain
    /// Audio since the last measurement (seconds) and its sample peak (linear).
    private var sinceMeasured = 0.0
    private var peak: Float = 0
    /// Seconds of audio between two measurements.
    package static let interval = 0.2

    /// Nil when the meter cannot be made for `rate`.
    /// - Parameter limiter: the station's true-peak ceiling (dBTP; nil: none), which bounds the gain's peaks.
    package init?(target: Double, limiter: Double?, rate: Int) {
        guard let meter = LoudnessMeter(rate: rate) else { return nil }
        self.meter = meter
        gain = LoudnessGain(target: target, peakCeiling: LoudnessGain.ceiling(limiter: limiter))
    }

    /// A new target or limiter (a reload): the gain moves to what they want from where it is.
    package func retarget(_ target: Double, limiter: Double?) {
        gain.target = target
        gain.peakCeiling = LoudnessGain.ceiling(limiter: limiter)
    }

    /// The input's loudness now (LUFS; nil: nothing above the gates).
    package var loudness: Double? { meter.loudness }

    /// `buffer` measured, and with the gain applied.
    package func process(_ buffer: PCMBuffer) -> PCMBuffer {
        meter.feed(buffer)
        let frames = min(buffer.left.count, buffer.right.count)
        let seconds = Double(frames) / Double(max(1, buffer.sampleRate))
        for index in 0..<frames { peak = max(peak, abs(buffer.left[index]), abs(buffer.right[index])) }
        sinceMeasured += seconds
        if sinceMeasured >= Self.interval {
            gain.measured(
                loudness: meter.loudness, momentary: meter.momentary, peak: Double(peak), seconds: sinceMeasured)
            sinceMeasured = 0
            peak = 0
        }
        let (from, to) = gain.advance(seconds: seconds)
        var out = buffer
        LoudnessGain.apply(&out, from: from, to: to)
        return out
    }
}

@available(*, unavailable) extension InputLoudness: Sendable {}
