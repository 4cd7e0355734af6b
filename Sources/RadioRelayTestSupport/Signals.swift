import Foundation

/// Amplitude of the `frequency` component of `samples[range]` (Goertzel): 1.0 for a full-scale sine.
package func toneAmplitude(_ samples: [Float], frequency: Double, rate: Int, range: Range<Int>) -> Double {
    let n = range.count
    let k = (Double(n) * frequency / Double(rate)).rounded()
    let w = 2 * Double.pi * k / Double(n)
    let coefficient = 2 * cos(w)
    var s1 = 0.0
    var s2 = 0.0
    for i in range {
        let s0 = Double(samples[i]) + coefficient * s1 - s2
        s2 = s1
        s1 = s0
    }
    let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
    return 2 * sqrt(max(power, 0)) / Double(n)
}

/// A small deterministic generator for repeatable random tests.
package struct SplitMix64: RandomNumberGenerator {
    package var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Which of a few test tones plays when, from decoded audio: each window of `window` seconds is labelled with the
/// loudest of `tones` whose amplitude passes `threshold`, or `nil` (silence or something else); runs of one label
/// become segments.
package struct ToneTimeline: CustomStringConvertible {
    package struct Segment: Equatable {
        package var tone: Double?
        package var start: Double
        package var end: Double
        package var length: Double { end - start }
    }

    package var segments: [Segment] = []

    package init(_ samples: [Float], rate: Int, tones: [Double], window: Double = 0.05, threshold: Double = 0.03) {
        let size = max(1, Int(window * Double(rate)))
        var start = 0
        while start + size <= samples.count {
            let amplitudes = tones.map {
                toneAmplitude(samples, frequency: $0, rate: rate, range: start..<start + size)
            }
            let loudest = amplitudes.indices.max { amplitudes[$0] < amplitudes[$1] }
            let tone = loudest.flatMap { amplitudes[$0] >= threshold ? tones[$0] : nil }
            let at = Double(start) / Double(rate)
            if let last = segments.last, last.tone == tone {
                segments[segments.count - 1].end = at + window
            } else {
                segments.append(Segment(tone: tone, start: at, end: at + window))
            }
            start += size
        }
    }

    /// The tones in the order they played, ignoring runs shorter than `minimum` seconds (a crossfade's middle).
    package func order(minimum: Double = 0.5) -> [Double] {
        var out: [Double] = []
        for segment in segments where segment.length >= minimum {
            guard let tone = segment.tone, out.last != tone else { continue }
            out.append(tone)
        }
        return out
    }

    /// The longest run without any of the tones between `from` and `to` seconds.
    package func longestGap(from: Double = 0, to: Double = .infinity) -> Double {
        segments.filter { $0.tone == nil && $0.end > from && $0.start < to }.map(\.length).max() ?? 0
    }

    /// When `tone` starts playing (a run of at least `minimum` seconds) after `after` seconds.
    package func start(of tone: Double, after: Double, minimum: Double = 0.5) -> Double? {
        segments.first { $0.tone == tone && $0.start >= after && $0.length >= minimum }?.start
    }

    package var description: String {
        segments.map { segment in
            let name = segment.tone.map { "\(Int($0)) Hz" } ?? "—"
            return String(format: "%6.2f–%6.2f s ", segment.start, segment.end) + name
        }.joined(separator: "\n")
    }
}
