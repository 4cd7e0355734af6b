import Foundation
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The queue between Reader and Encoder on the live path: drops crossfade, rate corrections leave out or repeat
/// single samples evenly. A change of input in it: `SwitchFadeTests`, `OutgoingFadeTests`.
@Suite struct PCMQueueTests {
    static func ramp(_ count: Int, from start: Float = 0) -> PCMBuffer {
        let values = (0..<count).map { start + Float($0) }
        return PCMBuffer(left: values, right: values.map { -$0 }, sampleRate: 48_000)
    }

    @Test func takingHandsOutTheOldestFirst() {
        var queue = PCMQueue(sampleRate: 48_000)
        queue.append(Self.ramp(1000))
        queue.append(Self.ramp(500, from: 1000))
        #expect(queue.frameCount == 1500)
        #expect(abs(queue.seconds - 1500.0 / 48_000) < 1e-12)
        let first = queue.take(frames: 600)
        #expect(first.left == (0..<600).map(Float.init))
        #expect(first.right == (0..<600).map { -Float($0) })
        let rest = queue.take(frames: 10_000)
        #expect(rest.left == (600..<1500).map(Float.init))
        #expect(queue.frameCount == 0)
        #expect(queue.take(frames: 10).isEmpty)
    }

    @Test func droppingCrossfadesFromTheDroppedAudioIntoWhatFollows() {
        var queue = PCMQueue(sampleRate: 48_000)
        // One second of 1.0, then one of 0.0: dropping the first half second must not jump from 1 to 0 at once.
        queue.append(
            PCMBuffer(
                left: .init(repeating: 1, count: 48_000), right: .init(repeating: 1, count: 48_000),
                sampleRate: 48_000))
        queue.append(PCMBuffer.silence(frames: 48_000, sampleRate: 48_000))
        queue.drop(frames: 60_000)
        #expect(queue.frameCount == 36_000)
        let out = queue.take(frames: 400)
        // The dropped audio (still 1.0 where the cut starts) fades out over 240 samples into the kept silence.
        #expect(out.left[0] > 0.99 && out.left[0] < 1)
        #expect(out.left[120] > 0.4 && out.left[120] < 0.6)
        #expect(out.left[239] < 0.01)
        #expect(out.left[300] == 0)
        for i in 1..<240 { #expect(out.left[i] <= out.left[i - 1]) }
        queue.drop(frames: -5)
        queue.drop(frames: 1_000_000)
        #expect(queue.frameCount == 0)
    }

    @Test(arguments: [0.001, -0.001, 0.0005])
    func aRateCorrectionChangesTheLengthEvenly(_ nudge: Double) {
        var queue = PCMQueue(sampleRate: 48_000)
        queue.append(Self.ramp(480_000))
        var total = 0
        var steps: [Float] = []
        for _ in 0..<100 {
            let out = queue.take(frames: 4800, nudge: nudge)
            total += out.frameCount
            steps += zip(out.left.dropFirst(), out.left).map { $0 - $1 }
        }
        #expect(abs(total - Int((480_000 * (1 - nudge)).rounded())) <= 1)
        // Every step is one sample forward, or two (one left out), or none (one repeated): never a jump.
        #expect(steps.allSatisfy { $0 >= 0 && $0 <= 2 })
        #expect(queue.take(frames: 10, nudge: .nan).isEmpty)
    }

    /// Titles marked where their metadata block sat: the front is taken up to each mark, a mark the front reached
    /// (by taking or dropping) is handed over once, the newest of several, and at most 16 wait.
    @Test func marksWaitWhereTheyWerePutUntilTheFrontReachesThem() {
        var queue = PCMQueue(sampleRate: 48_000)
        queue.append(Self.ramp(1000))
        queue.mark("A")
        queue.append(Self.ramp(1000, from: 1000))
        #expect(queue.framesBeforeMark(limit: 5000) == 1000)
        #expect(queue.framesBeforeMark(limit: 300) == 300)
        #expect(queue.takeReachedMark() == nil)
        #expect(queue.take(frames: 1000).left.last == 999)
        #expect(queue.framesBeforeMark(limit: 5000) == 0)
        #expect(queue.takeReachedMark() == "A")
        #expect(queue.takeReachedMark() == nil)
        #expect(queue.framesBeforeMark(limit: 5000) == 5000)
        // Two marks inside dropped audio: the newer title is the one that counts.
        queue.mark("B")
        queue.append(Self.ramp(100))
        queue.mark("C")
        queue.append(Self.ramp(100))
        queue.drop(frames: 1500)
        #expect(queue.takeReachedMark() == "C")
        // An empty queue marks the start of whatever comes next.
        _ = queue.take(frames: 10_000)
        queue.mark("D")
        #expect(queue.takeReachedMark() == "D")
        // Bounded: the oldest marks give way.
        for i in 0..<20 {
            queue.mark("\(i)")
            queue.append(Self.ramp(10))
        }
        #expect(queue.framesBeforeMark(limit: 1000) == 40)  // marks 0–3 are gone; 4 sits after 40 frames
        queue.removeMarks()
        #expect(queue.framesBeforeMark(limit: 1000) == 1000)
    }
}
