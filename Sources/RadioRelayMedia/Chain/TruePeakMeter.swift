import CEbur128

/// The true peak of stereo audio (ITU-R BS.1770's: the peak of the signal oversampled 4×, which shows the peaks a
/// decoder's reconstruction has between samples), measured by libebur128. It keeps the last samples it was fed for
/// its interpolation filter, so it measures a stream piece by piece, in order.
///
/// Confined to the thread that feeds it.
package final class TruePeakMeter {
    private let state: UnsafeMutablePointer<ebur128_state>
    package let rate: Int
    /// Interleaved frames handed to libebur128 at a time at most.
    private static let chunk = 4_800
    private var scratch = [Float](repeating: 0, count: 2 * TruePeakMeter.chunk)

    /// Nil when libebur128 refuses the rate or cannot allocate.
    package init?(rate: Int) {
        guard rate >= 8_000, rate <= 384_000,
            let state = ebur128_init(2, UInt(rate), Int32(EBUR128_MODE_TRUE_PEAK.rawValue))
        else { return nil }
        self.state = state
        self.rate = rate
    }

    deinit {
        var state: UnsafeMutablePointer<ebur128_state>? = state
        ebur128_destroy(&state)
    }

    /// The true peak (linear, full scale 1.0) of `frames` frames of `left` and `right` from `start` (indices masked
    /// by `mask`: the limiter's rings; `Int.max` for plain arrays), at least their sample peak.
    package func measure(left: [Float], right: [Float], start: Int = 0, frames: Int, mask: Int = Int.max) -> Float {
        var peak: Float = 0
        var done = 0
        while done < frames {
            let count = min(Self.chunk, frames - done)
            for index in 0..<count {
                let slot = (start + done + index) & mask
                let l = left[slot]
                let r = right[slot]
                scratch[2 * index] = l
                scratch[2 * index + 1] = r
                peak = max(peak, abs(l), abs(r))
            }
            let added = scratch.withUnsafeBufferPointer { ebur128_add_frames_float(state, $0.baseAddress, count) }
            if added == EBUR128_SUCCESS.rawValue {
                for channel in 0..<2 {
                    var value = 0.0
                    if ebur128_prev_true_peak(state, UInt32(channel), &value) == EBUR128_SUCCESS.rawValue {
                        peak = max(peak, value.isFinite ? Float(value) : .infinity)
                    }
                }
            }
            done += count
        }
        return peak.isNaN ? .infinity : peak
    }

    /// The true peak of `buffer` (linear).
    package func measure(_ buffer: PCMBuffer) -> Float {
        measure(left: buffer.left, right: buffer.right, frames: min(buffer.left.count, buffer.right.count))
    }
}

@available(*, unavailable) extension TruePeakMeter: Sendable {}
