import RadioRelaySystem

/// Ogg Opus time: granule positions and Opus frames count samples at 48 kHz whatever the input rate (RFC 7845 §4).
public enum OpusClock {
    public static let rate = 48_000

    /// Seconds in `samples` 48 kHz samples.
    public static func seconds(_ samples: Int64) -> Double { Double(samples) / Double(rate) }

    /// 48 kHz samples in `seconds`, clamped so that no input (infinite, NaN, huge) can trap the conversion.
    public static func samples(_ seconds: Double) -> Int64 {
        guard seconds.isFinite else { return seconds > 0 ? Int64.max / 2 : 0 }
        let value = (seconds * Double(rate)).rounded()
        return Int64(max(-4e18, min(4e18, value)))
    }
}
