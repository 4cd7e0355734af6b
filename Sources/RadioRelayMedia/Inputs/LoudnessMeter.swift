import CEbur128
import RadioRelaySystem

/// The loudness of an input's decoded audio (EBU R128 / ITU-R BS.1770), measured by libebur128: the gated loudness
/// of the last `window` seconds (libebur128's integrated loudness with a bounded history, so it follows the input
/// and forgets what it played long ago; its gates leave silence and speech pauses out), in LUFS. Fed the common
/// format (stereo, non-interleaved); the samples are interleaved into a bounded scratch buffer for the library.
///
/// Confined to the thread that feeds it (a station's pipeline).
package final class LoudnessMeter {
    private let state: UnsafeMutablePointer<ebur128_state>
    package let rate: Int
    package let window: Double
    /// Interleaved frames handed to libebur128 at a time at most.
    private static let chunk = 4_800
    private var scratch = [Float](repeating: 0, count: 2 * LoudnessMeter.chunk)

    /// Nil when libebur128 refuses the rate (it takes 1 Hz to 2.8 MHz) or cannot allocate.
    /// - Parameter window: seconds of history the loudness is gated over (at least 3: EBU R128's short-term window).
    package init?(rate: Int, window: Double = 10) {
        guard rate > 0, rate <= 384_000, let state = ebur128_init(2, UInt(rate), Int32(EBUR128_MODE_I.rawValue))
        else { return nil }
        self.state = state
        self.rate = rate
        let seconds = window.isFinite ? min(600, max(3, window)) : 10
        self.window = seconds
        _ = ebur128_set_max_history(state, UInt(seconds * 1000))
    }

    deinit {
        var state: UnsafeMutablePointer<ebur128_state>? = state
        ebur128_destroy(&state)
    }

    /// Measures `buffer` (its rate must be the meter's: a buffer at another is not measured).
    package func feed(_ buffer: PCMBuffer) {
        guard buffer.sampleRate == rate else { return }
        let count = min(buffer.left.count, buffer.right.count)
        var start = 0
        while start < count {
            let frames = min(Self.chunk, count - start)
            for index in 0..<frames {
                scratch[2 * index] = buffer.left[start + index]
                scratch[2 * index + 1] = buffer.right[start + index]
            }
            _ = scratch.withUnsafeBufferPointer { ebur128_add_frames_float(state, $0.baseAddress, frames) }
            start += frames
        }
    }

    /// The momentary loudness (the last 400 ms, ungated) in LUFS; nil for digital silence.
    package var momentary: Double? {
        var value = 0.0
        guard ebur128_loudness_momentary(state, &value) == EBUR128_SUCCESS.rawValue, value.isFinite else { return nil }
        return value
    }

    /// The gated loudness of the window in LUFS; nil while everything in it is below the gates (silence, or no audio
    /// yet).
    package var loudness: Double? {
        var value = 0.0
        guard ebur128_loudness_global(state, &value) == EBUR128_SUCCESS.rawValue, value.isFinite else { return nil }
        return value
    }
}

@available(*, unavailable) extension LoudnessMeter: Sendable {}
