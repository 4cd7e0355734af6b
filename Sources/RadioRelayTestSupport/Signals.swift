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
