import Foundation
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The outgoing input around a switch (`PCMQueue.beginSwitch(…, outgoingContinues: true)`, `fadeOutTail`,
/// `takeUnderrunTail`): its next audio crossfaded in place, a fade it stops halfway through, a hand-back with nothing
/// left waiting, audio that runs out; in each, the largest step between two samples stays within a small multiple of
/// the tone's own.
@Suite struct OutgoingFadeTests: FadeMeasures {
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
