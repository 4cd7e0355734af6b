import RadioRelaySystem

/// A buffer in the common format: Float32, two channels, non-interleaved, at one sample rate.
public struct PCMBuffer: Sendable {
    public var left: [Float]
    public var right: [Float]
    public var sampleRate: Int

    public init(left: [Float], right: [Float], sampleRate: Int) {
        precondition(left.count == right.count, "channels of a PCMBuffer differ in length")
        self.left = left
        self.right = right
        self.sampleRate = sampleRate
    }

    public init(sampleRate: Int) {
        self.init(left: [], right: [], sampleRate: sampleRate)
    }

    /// Samples per channel.
    public var frameCount: Int { left.count }
    public var isEmpty: Bool { left.isEmpty }
    public var duration: Double { Double(frameCount) / Double(sampleRate) }

    public mutating func append(_ other: PCMBuffer) {
        left.append(contentsOf: other.left)
        right.append(contentsOf: other.right)
    }

    /// Silence of the given length.
    public static func silence(frames: Int, sampleRate: Int) -> PCMBuffer {
        PCMBuffer(
            left: [Float](repeating: 0, count: frames), right: [Float](repeating: 0, count: frames),
            sampleRate: sampleRate)
    }
}

extension PCMBuffer {
    /// Frames at `rate` for `seconds`, never trapping (0 for anything not finite and positive).
    package static func frames(_ seconds: Double, rate: Int) -> Int {
        let value = (seconds * Double(rate)).rounded(.down)
        guard value.isFinite, value >= 1 else { return 0 }
        return Int(min(value, Double(Int32.max)))
    }
}
