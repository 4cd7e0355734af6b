import Foundation
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// What the crossfade suites (`SwitchFadeTests`, `OutgoingFadeTests`) make a queue's input of and measure its output
/// with: tones at 48 kHz, pieces of them, the queue drained, the largest step between two samples.
protocol FadeMeasures {}

extension FadeMeasures {
    static var rate: Int { 48_000 }

    /// `seconds` of a sine at `frequency`, amplitude `amplitude`, starting at `phase`.
    static func tone(_ frequency: Double, seconds: Double, phase: Double = 0, amplitude: Float = 0.5) -> PCMBuffer {
        let count = Int(seconds * Double(rate))
        let step = 2 * Double.pi * frequency / Double(rate)
        let samples: [Float] = (0..<count).map { index in amplitude * Float(sin(phase + step * Double(index))) }
        return PCMBuffer(left: samples, right: samples, sampleRate: rate)
    }

    /// The largest step between two neighbouring samples.
    static func largestStep(_ samples: [Float]) -> Float {
        zip(samples, samples.dropFirst()).map { abs($1 - $0) }.max() ?? 0
    }

    /// The queue's whole content, released in pieces of `piece` frames (as the clock does).
    static func drain(_ queue: inout PCMQueue, piece: Int = 960) -> [Float] {
        var out: [Float] = []
        while queue.frameCount > 0 { out += queue.take(frames: piece).left }
        return out
    }

    /// `buffer` in pieces of `size` frames.
    static func pieces(_ buffer: PCMBuffer, size: Int) -> [PCMBuffer] {
        stride(from: 0, to: buffer.frameCount, by: size).map { at in
            let end = min(buffer.frameCount, at + size)
            return PCMBuffer(
                left: Array(buffer.left[at..<end]), right: Array(buffer.right[at..<end]), sampleRate: Self.rate)
        }
    }
}

/// A change of input in the queue (`PCMQueue.beginSwitch`): the old input's tail fades out as the new one fades
/// in, along equal-power curves, so the samples around a switch never step — unlike a plain cut, which the test
/// shows steps.
@Suite struct SwitchFadeTests: FadeMeasures {
    /// A 440 Hz tone, then a 660 Hz one in MP3-sized pieces with a phase of its own. The steepest a 660 Hz sine of
    /// amplitude 0.5 moves between samples is 0.5 × 2π × 660 / 48 000 ≈ 0.043; a cut from one to the other at an
    /// unlucky phase steps by up to 1.
    @Test func aCrossfadeNeverStepsWhereACutDoes() {
        let natural: Float = 0.5 * 2 * Float.pi * 660 / Float(Self.rate)
        var cut = PCMQueue(sampleRate: Self.rate)
        cut.append(Self.tone(440, seconds: 1))
        var incoming = Self.tone(660, seconds: 2, phase: 1.6)
        cut.append(incoming)
        #expect(Self.largestStep(Self.drain(&cut)) > 10 * natural, "a plain cut steps: the test can fail")

        var faded = PCMQueue(sampleRate: Self.rate)
        faded.append(Self.tone(440, seconds: 1))
        faded.beginSwitch(crossfade: Self.rate / 2, minimum: Self.rate / 20)
        #expect(faded.isSwitching)
        var position = 0
        while position < incoming.frameCount {
            let n = min(1152, incoming.frameCount - position)
            faded.append(
                PCMBuffer(
                    left: Array(incoming.left[position..<position + n]),
                    right: Array(incoming.right[position..<position + n]), sampleRate: Self.rate))
            position += n
        }
        #expect(!faded.isSwitching)
        let out = Self.drain(&faded)
        #expect(Self.largestStep(out) < 2.5 * natural, "largest step \(Self.largestStep(out))")
        // The crossfade overlaps half a second: 1 s + 2 s − 0.5 s; afterwards the new input at its own level.
        #expect(out.count == 3 * Self.rate - Self.rate / 2)
        let tail = out.suffix(Self.rate / 2)
        #expect(abs((tail.max() ?? 0) - 0.5) < 0.01)
        incoming = Self.tone(660, seconds: 0.5, phase: 1.6 + 2 * Double.pi * 660 * 1.5)
        #expect(zip(tail, incoming.left).allSatisfy { abs($0 - $1) < 1e-3 }, "after the fade, the new input as it is")
    }

    /// When the old input has nothing left (the clock filled silence meanwhile), the new one fades in from zero
    /// over the minimum; when the clock released part of the faded tail before the new input came, the fade carries
    /// on from the new front.
    @Test func aFadeInFromSilenceAndFromAHalfReleasedTail() {
        var empty = PCMQueue(sampleRate: Self.rate)
        empty.beginSwitch(crossfade: Self.rate / 2, minimum: 2400)
        empty.append(Self.tone(660, seconds: 0.5, phase: 1.3))
        let faded = Self.drain(&empty)
        #expect(abs(faded[0]) < 1e-3, "it starts from silence")
        #expect(Self.largestStep([0] + faded) < 0.05)
        #expect(abs((faded[3000...].map(abs).max() ?? 0) - 0.5) < 0.01, "full level once the 50 ms are over")

        var half = PCMQueue(sampleRate: Self.rate)
        half.append(Self.tone(440, seconds: 1))
        half.beginSwitch(crossfade: Self.rate / 2, minimum: 2400)
        var out = half.take(frames: Self.rate * 3 / 4).left  // the clock went on: a quarter second of tail is left
        half.append(Self.tone(660, seconds: 1, phase: 0.7))
        out += Self.drain(&half)
        #expect(Self.largestStep(out) < 0.12, "largest step \(Self.largestStep(out))")
        #expect(out.count == Self.rate * 2 - Self.rate / 4)
    }
}

extension SwitchFadeTests {
    /// The clock drops everything that waits when a burst puts the stream past its lead (the stream at its lead has
    /// no room): the cut's crossfade then goes on into the audio appended next, or fades out before silence or
    /// before another input, so no path steps. Without the carried crossfade the same cut steps by ~1.
    @Test func aCutOfAllThatWaitsCrossfadesIntoWhatComesNext() {
        let natural: Float = 0.5 * 2 * Float.pi * 660 / Float(Self.rate)
        // Released 0.5 s of a tone (it ends at phase 0); the other 0.5 s is dropped; the tone goes on at phase 1.6.
        func cutOfAll() -> (queue: PCMQueue, released: [Float]) {
            var queue = PCMQueue(sampleRate: Self.rate)
            queue.append(Self.tone(660, seconds: 1))
            let released = queue.take(frames: Self.rate / 2).left
            queue.drop(frames: queue.frameCount)
            #expect(queue.frameCount == 0, "everything that waited is dropped")
            return (queue, released)
        }
        var (next, released) = cutOfAll()
        var later = Self.tone(660, seconds: 0.5, phase: 1.6)
        // In MP3-sized pieces, the first shorter than the crossfade.
        var position = 0
        for n in [100, 1052, 1152, 1152] {
            next.append(
                PCMBuffer(
                    left: Array(later.left[position..<position + n]),
                    right: Array(later.right[position..<position + n]),
                    sampleRate: Self.rate))
            position += n
        }
        let out = released + Self.drain(&next)
        #expect(Self.largestStep(out) < 2.5 * natural, "largest step \(Self.largestStep(out))")
        #expect(
            Self.largestStep(released + later.left.prefix(10)) > 10 * natural, "the same cut plainly: the test can fail"
        )

        // Silence next: the cut's audio fades out first.
        var silent: PCMQueue
        (silent, released) = cutOfAll()
        let tail = silent.takeSpliceTail()?.left ?? []
        #expect(tail.count == PCMQueue.crossfade)
        #expect(Self.largestStep(released + tail + [0, 0]) < 2.5 * natural, "\(Self.largestStep(released + tail))")
        #expect(silent.takeSpliceTail() == nil, "taken once")

        // Another input next: the cut's audio fades out, the new input fades in over it.
        var switching: PCMQueue
        (switching, released) = cutOfAll()
        switching.beginSwitch(crossfade: Self.rate / 2, minimum: Self.rate / 20)
        later = Self.tone(440, seconds: 0.5, phase: 0.4)
        switching.append(later)
        let switched = released + Self.drain(&switching)
        #expect(Self.largestStep(switched) < 2.5 * natural, "largest step \(Self.largestStep(switched))")

        // Audio discarded (not cut) leaves nothing to crossfade.
        var discarded = PCMQueue(sampleRate: Self.rate)
        discarded.append(Self.tone(660, seconds: 1))
        discarded.removeAll()
        #expect(discarded.frameCount == 0 && discarded.takeSpliceTail() == nil)
    }
}
