import Glibc

/// The level of decoded audio in windows of a fixed length, for dead-air detection: each window's RMS over both
/// channels against a threshold in dBFS (full scale is 1.0). A pure value fed with the common format; it keeps two
/// numbers, whatever the audio.
public struct LevelMeter: Sendable, Equatable {
    /// What the windows completed by one `feed` said.
    public struct Reading: Sendable, Equatable {
        /// Windows completed.
        public var windows = 0
        /// Whether the last completed window was below the threshold.
        public var lastQuiet = false
        /// The loudest completed window's RMS, in dBFS (-infinity for digital silence).
        public var loudest = -Double.infinity
    }

    /// Frames per window.
    public let windowFrames: Int
    /// The RMS below which a window is quiet (linear, from `thresholdDB`).
    public let threshold: Double
    public let thresholdDB: Double
    private var sumSquares = 0.0
    private var frames = 0

    /// - Parameters:
    ///   - thresholdDB: a window whose RMS is below this many dBFS is quiet (−50 by default: a noise floor, well
    ///     under quiet music).
    ///   - window: seconds per window; `rate` the audio's sample rate.
    public init(thresholdDB: Double = -50, window: Double = 0.1, rate: Int = 48_000) {
        let db = thresholdDB.isFinite ? min(0, max(-200, thresholdDB)) : -50
        self.thresholdDB = db
        threshold = pow(10, db / 20)
        let seconds = window.isFinite ? min(10, max(0.001, window)) : 0.1
        windowFrames = max(1, Int((seconds * Double(max(1, rate))).rounded()))
    }

    /// Measures `buffer`; returns what the windows it completed said.
    public mutating func feed(_ buffer: PCMBuffer) -> Reading {
        var reading = Reading()
        var index = 0
        let count = min(buffer.left.count, buffer.right.count)
        while index < count {
            let take = min(windowFrames - frames, count - index)
            for i in index..<(index + take) {
                let l = Double(buffer.left[i])
                let r = Double(buffer.right[i])
                // A NaN or an infinity from a broken decoder counts as loud: never quiet by accident.
                sumSquares += l.isFinite && r.isFinite ? (l * l + r * r) / 2 : 1
            }
            frames += take
            index += take
            if frames == windowFrames {
                let rms = (sumSquares / Double(windowFrames)).squareRoot()
                reading.windows += 1
                reading.lastQuiet = rms < threshold
                reading.loudest = max(reading.loudest, rms > 0 ? 20 * log10(rms) : -Double.infinity)
                sumSquares = 0
                frames = 0
            }
        }
        return reading
    }
}
