import Glibc

/// How far an Opus encoder's decoded output can pass the true peak of what it was given, by bitrate per channel:
/// the true-peak limiter works this far under its ceiling so that what listeners decode stays under it. Lossy
/// coding adds noise to every frame, which rides on the peaks; the fewer bits, the more.
///
/// Measured (dB) on the worst material a station carries: a two-tone signal hard-clipped 3 dB over full scale,
/// limited to −1 dBTP, encoded at each bitrate and decoded by ffmpeg, true peak by its `ebur128` filter: stereo
/// 32k +4.7, 64k +2.4, 96k +1.1, 128k +0.7, 192k +0.4 (per channel 16k, 32k, 48k, 64k, 96k). The table is those,
/// 0.2 dB over, linear in the octave between two points, its ends held beyond them.
package enum CodecOvershoot {
    /// (bits per second per channel, dB).
    static let measured: [(Double, Double)] = [
        (16_000, 4.9), (32_000, 2.6), (48_000, 1.3), (64_000, 0.9), (96_000, 0.6),
    ]

    /// The overshoot to allow for an Opus output of `bitrate` b/s and `channels` (dB, ≥ 0).
    package static func margin(bitrate: Int, channels: Int) -> Double {
        let perChannel = Double(max(1, bitrate)) / Double(max(1, channels))
        guard let first = measured.first, let last = measured.last else { return 0 }
        if perChannel <= first.0 { return first.1 }
        if perChannel >= last.0 { return last.1 }
        for (low, high) in zip(measured, measured.dropFirst()) where perChannel <= high.0 {
            let position = log2(perChannel / low.0) / log2(high.0 / low.0)
            return low.1 + (high.1 - low.1) * position
        }
        return last.1
    }
}
