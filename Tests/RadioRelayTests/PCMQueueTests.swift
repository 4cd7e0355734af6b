import Foundation
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The queue between Reader and Encoder on the live path: drops crossfade, rate corrections leave out or repeat
/// single samples evenly.
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

/// A change of input in the queue (`PCMQueue.beginSwitch`): the old input's tail fades out as the new one fades
/// in, along equal-power curves, so the samples around a switch never step — unlike a plain cut, which the test
/// shows steps.
@Suite struct SwitchFadeTests {
    static let rate = 48_000

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

extension SwitchFadeTests {
    /// `buffer` in pieces of `size` frames.
    static func pieces(_ buffer: PCMBuffer, size: Int) -> [PCMBuffer] {
        stride(from: 0, to: buffer.frameCount, by: size).map { at in
            let end = min(buffer.frameCount, at + size)
            return PCMBuffer(
                left: Array(buffer.left[at..<end]), right: Array(buffer.right[at..<end]), sampleRate: Self.rate)
        }
    }

    /// The station at its lead holds almost nothing unreleased, so a switch up (the old input still delivering)
    /// crossfades with the old input's next audio: both arrive in pieces at real time (the new one's first 30 ms
    /// at once), and the output is exactly old × cos + new × sin over the whole crossfade — the front never
    /// passes audio of the old input still to come, and nothing steps.
    @Test(arguments: [1152, 12_000])
    func aCrossfadeGoesOnWithTheOutgoingInputsNextAudio(oldPiece: Int) {
        let natural: Float = 0.5 * 2 * Float.pi * 660 / Float(Self.rate)
        let length = Self.rate / 2
        let old = Self.tone(440, seconds: 2)
        var queue = PCMQueue(sampleRate: Self.rate)
        queue.append(PCMBuffer(left: Array(old.left[..<4800]), right: Array(old.right[..<4800]), sampleRate: Self.rate))
        var out = queue.take(frames: 4320).left  // 10 ms wait unreleased
        queue.beginSwitch(crossfade: length, minimum: 2400, outgoingContinues: true)
        #expect(queue.takesOutgoing && queue.isSwitching)
        let incoming = Self.tone(660, seconds: 2, phase: 1.1)
        var newPieces = Self.pieces(incoming, size: 1152)
        // The new input's newest kept audio at once: as much as the waiting tail and 20 ms more (`Pipeline.carryOut`).
        let first = 480 + 960
        queue.append(
            PCMBuffer(
                left: Array(incoming.left[..<first]), right: Array(incoming.right[..<first]), sampleRate: Self.rate))
        newPieces = Self.pieces(
            PCMBuffer(
                left: Array(incoming.left[first...]), right: Array(incoming.right[first...]), sampleRate: Self.rate),
            size: 1152)
        #expect(queue.readyCount == 480, "only the waiting tail, until the old input's next audio comes")
        var oldPieces = Self.pieces(
            PCMBuffer(left: Array(old.left[4800...]), right: Array(old.right[4800...]), sampleRate: Self.rate),
            size: oldPiece)
        // Pieces of 12 000 frames: the old input runs a quarter second ahead (a network upstream's big chunks).
        while queue.takesOutgoing && !oldPieces.isEmpty {
            queue.appendOutgoing(oldPieces.removeFirst())
            if !newPieces.isEmpty { queue.append(newPieces.removeFirst()) }
            out += queue.take(frames: min(960, queue.readyCount)).left
        }
        #expect(!queue.takesOutgoing, "the old input's part ends with its fade")
        // The old input's part is over; the new one must still reach its end before the front passes it (the clock
        // would take more than the new input has brought).
        while queue.isSwitching && !newPieces.isEmpty {
            queue.append(newPieces.removeFirst())
            out += queue.take(frames: min(2400, queue.readyCount)).left
        }
        for piece in newPieces { queue.append(piece) }
        out += Self.drain(&queue)
        #expect(!queue.isSwitching)
        // What it must be: the old tone to the switch, then the crossfade from 10 ms before it, then the new tone.
        var expected = Array(old.left[..<4320])
        for i in 0..<(2 * Self.rate) {
            let mixed =
                i < length
                ? old.left[4320 + i] * Crossfade.outgoing(i, of: length) + incoming.left[i]
                    * Crossfade.incoming(i, of: length)
                : incoming.left[i]
            expected.append(mixed)
        }
        #expect(out.count == expected.count)
        let worst = zip(out, expected).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1e-5, "largest difference from the crossfade \(worst)")
        #expect(Self.largestStep(out) < 2.5 * natural, "largest step \(Self.largestStep(out))")
    }

    /// The old input stops halfway through its fade (it failed): its last audio fades out in a few milliseconds,
    /// nothing steps, and the new input goes on.
    @Test func anOutgoingInputThatStopsEndsItsFadeWithoutAStep() {
        let natural: Float = 0.5 * 2 * Float.pi * 660 / Float(Self.rate)
        let old = Self.tone(440, seconds: 1)
        let incoming = Self.tone(660, seconds: 1, phase: 2.2)
        var queue = PCMQueue(sampleRate: Self.rate)
        queue.beginSwitch(crossfade: Self.rate / 2, minimum: 2400, outgoingContinues: true)
        var out: [Float] = []
        var oldPieces = Self.pieces(old, size: 1152)
        var newPieces = Self.pieces(incoming, size: 1152)
        for _ in 0..<8 {
            queue.appendOutgoing(oldPieces.removeFirst())
            queue.append(newPieces.removeFirst())
            out += queue.take(frames: min(960, queue.readyCount)).left
        }
        queue.endOutgoing()
        #expect(!queue.takesOutgoing)
        for piece in newPieces { queue.append(piece) }
        out += Self.drain(&queue)
        #expect(Self.largestStep(out) < 2.5 * natural, "largest step \(Self.largestStep(out))")
        #expect(out.count == Self.rate)

        // A new input up to a second ahead (the rest of a small burst) does not end the old one's fade: the front
        // waits for the old input's audio while its fade lasts (the pipeline ends it if that audio stops coming).
        var ahead = PCMQueue(sampleRate: Self.rate)
        ahead.beginSwitch(crossfade: Self.rate / 2, minimum: 2400, outgoingContinues: true)
        ahead.appendOutgoing(Self.pieces(old, size: 1152)[0])
        ahead.append(incoming)
        #expect(ahead.takesOutgoing && ahead.readyCount == 1152 && ahead.frameCount == Self.rate)
        var stalled = ahead
        stalled.endOutgoing()
        #expect(stalled.readyCount == stalled.frameCount)
        // More than a second ahead (an upstream faster than real time): the old input's part ends, so the new
        // input's audio does not pile up behind the front.
        ahead.append(Self.pieces(incoming, size: 2400)[0])
        #expect(!ahead.takesOutgoing && ahead.readyCount == ahead.frameCount)
    }
}

extension SwitchFadeTests {
    /// A paced input (a DJ) hands back with its audio all but released (the station runs at its lead): its fade-out
    /// has nothing to fade, so a stop steps from the tone to silence in one sample. Continued from what was released
    /// (read backwards from the last sample), it fades over 50 ms with no step larger than the tone's own, and the
    /// next input fades in over it.
    @Test func aHandBackWithNothingWaitingFadesTheContinuedAudio() {
        let natural: Float = 0.5 * 2 * Float.pi * 550 / Float(Self.rate)
        // 0.5 s of 550 Hz ending near its peak (the worst place to stop), all of it released.
        let played = Self.tone(550, seconds: 0.5, phase: Double.pi / 2 - 2 * Double.pi * 550 * 0.5)
        var queue = PCMQueue(sampleRate: Self.rate)
        queue.append(played)
        let released = Self.drain(&queue)
        #expect(abs(released.last ?? 0) > 0.45, "it stops near its peak")
        #expect(Self.largestStep(released + [0]) > 10 * natural, "a plain stop steps: the test can fail")
        #expect(queue.fadeOutTail(frames: 2400) == 2400, "continued to the whole fade")
        queue.beginSwitch(crossfade: Self.rate / 2, minimum: 2400)
        queue.append(Self.tone(440, seconds: 0.5, phase: 2.1))
        let after = Self.drain(&queue)
        let steps = Self.largestStep(released + after)
        #expect(steps < 1.5 * natural, "largest step \(steps) against the tone's own \(natural)")
        // The continued audio is the tone read backwards: its first sample continues from the last released one.
        #expect(abs(after[0] - released[released.count - 2]) < 1e-3)
        #expect(after.count == Self.rate / 2, "the next input is mixed into the 50 ms fade, not after it")
    }

    /// An input that hangs: the audio runs out with nothing waiting and the clock fills silence. Its audio is
    /// continued and faded out over the silence's first frames, once; the next audio fades in from silence.
    @Test func anInputThatRunsOutFadesIntoSilenceAndBackIn() throws {
        let natural: Float = 0.5 * 2 * Float.pi * 550 / Float(Self.rate)
        var queue = PCMQueue(sampleRate: Self.rate)
        #expect(queue.takeUnderrunTail(frames: 960, fadeIn: 240) == nil, "no audio yet: nothing to fade")
        queue.append(Self.tone(550, seconds: 0.3, phase: 0.4))
        #expect(queue.takeUnderrunTail(frames: 960, fadeIn: 240) == nil, "audio waits: no underrun")
        let released = Self.drain(&queue)
        let taken = queue.takeUnderrunTail(frames: 960, fadeIn: 240)
        let tail = try #require(taken)
        #expect(tail.frameCount == 960 && abs(tail.left.last ?? 1) < 0.01)
        #expect(queue.takeUnderrunTail(frames: 960, fadeIn: 240) == nil, "once: then silence")
        let silence = [Float](repeating: 0, count: 4800)
        queue.append(Self.tone(550, seconds: 0.2, phase: 1.9))
        let resumed = Self.drain(&queue)
        #expect(abs(resumed[0]) < 0.01, "it fades in from silence")
        let steps = Self.largestStep(released + tail.left + silence + resumed)
        #expect(steps < 1.5 * natural, "largest step \(steps) against the tone's own \(natural)")
        // Without the tail and the fade-in, the same run steps.
        #expect(Self.largestStep(released + silence + Self.tone(550, seconds: 0.2, phase: 1.9).left) > 5 * natural)
        // A tail that was faded out already (an input that stopped) is not continued again.
        var stopped = PCMQueue(sampleRate: Self.rate)
        stopped.append(Self.tone(550, seconds: 0.1))
        stopped.fadeOutTail(frames: 2400)
        _ = Self.drain(&stopped)
        #expect(stopped.takeUnderrunTail(frames: 960, fadeIn: 240) == nil)
        #expect(stopped.fadeOutTail(frames: 2400) == 0, "nothing left to fade")
    }
}
