import RadioRelaySystem

/// Decoded audio waiting for the Encoder, in the common format: the place where the stream clock's decisions
/// become samples. Dropping from the front crossfades, so a cut costs no click; releasing can apply a small rate
/// correction by leaving out or repeating single samples spread evenly (at 1000 ppm, one in a thousand).
///
/// A title can be marked at the queue's end (where an ICY metadata block sat in the audio), so that its chained
/// Ogg link starts when the audio that followed the block is encoded: `framesBeforeMark` says how far the front may
/// be taken before the next mark, `takeReachedMark` hands over the marks the front has reached (dropped audio
/// included).
package struct PCMQueue {
    /// Marks waiting at most; an older one is superseded by the titles after it anyway.
    package static let maxMarks = 16

    /// Samples of the crossfade when the front is dropped (5 ms at 48 kHz).
    package static let crossfade = 240

    package let sampleRate: Int
    // Storage without `private` is used by the switch's half of the queue too (`PCMQueue+Switch.swift`).
    var left: [Float] = []
    var right: [Float] = []
    var start = 0
    /// Fractional samples owed by the rate correction, carried from one release to the next.
    private var owed = 0.0
    /// Frames ever appended, and ever taken or dropped: the positions marks refer to.
    var appended: Int64 = 0
    var consumed: Int64 = 0
    /// Titles marked at a position (the frames appended before them), oldest first.
    private var marks: [(position: Int64, title: String)] = []
    /// A change of input under way (`beginSwitch`).
    var fade: SwitchFade?
    /// A crossfade with an outgoing input that goes on delivering (`beginSwitch(…, outgoingContinues: true)`).
    var mix: CrossMix?
    /// A drop that left less after it than its crossfade needs (the clock dropping all that waited, the stream at
    /// its lead): the start of the dropped audio — what would have followed the last sample released — still to be
    /// crossfaded into the audio appended next.
    private var splice: Splice?
    /// The newest frames released (at most `historyFrames`, oldest first): what the audio of an input that stopped
    /// with little or nothing waiting is continued from, so that its fade-out has audio to fade (`continuation`).
    var recentLeft: [Float] = []
    var recentRight: [Float] = []
    /// Whether the newest audio (waiting, or released last) is an input's, not yet faded out: only then is there
    /// anything to continue, and a fade-out to make (a faded tail mirrored would swell again).
    var endsAudible = false

    private struct Splice {
        /// The dropped samples still to fade out, and how many of them have been used.
        var left: [Float]
        var right: [Float]
        var next = 0
        /// The crossfade's place of `left[0]`, and its length.
        var first: Int
        var length: Int

        /// The weight of the new audio against dropped sample `index`.
        func weight(_ index: Int) -> Float { Float(first + index + 1) / Float(length + 1) }
    }

    package init(sampleRate: Int) { self.sampleRate = sampleRate }

    package var frameCount: Int { left.count - start }
    package var seconds: Double { Double(frameCount) / Double(sampleRate) }

    package mutating func append(_ buffer: PCMBuffer) {
        guard !buffer.isEmpty else { return }
        endsAudible = true
        if mix != nil {
            appendIncoming(buffer)
            return
        }
        if var switching = fade {
            appendFading(buffer, &switching)
            fade = switching.isFinished ? nil : switching
            return
        }
        let first = left.count
        left.append(contentsOf: buffer.left)
        right.append(contentsOf: buffer.right)
        appended += Int64(buffer.frameCount)
        if splice != nil { finishSplice(from: first) }
    }

    /// Crossfades what is left of `splice` into the samples from index `first` on (as many as there are).
    private mutating func finishSplice(from first: Int) {
        guard var carried = splice else { return }
        var index = first
        while index < left.count && carried.next < carried.left.count {
            let weight = carried.weight(carried.next)
            left[index] = carried.left[carried.next] * (1 - weight) + left[index] * weight
            right[index] = carried.right[carried.next] * (1 - weight) + right[index] * weight
            carried.next += 1
            index += 1
        }
        splice = carried.next < carried.left.count ? carried : nil
    }

    /// Forgets every frame waiting, with no crossfade into what comes next (audio that is discarded, not cut).
    package mutating func removeAll() {
        consumed += Int64(frameCount)
        start = left.count
        splice = nil
        endsAudible = false
        compact()
    }

    /// The rest of an unfinished crossfade a drop left (see `splice`), faded out to silence, and forgotten: what
    /// goes before silence or another input, so that neither starts with a step (nil: none waits).
    package mutating func takeSpliceTail() -> PCMBuffer? {
        guard let carried = splice else { return nil }
        splice = nil
        let range = carried.next..<carried.left.count
        return PCMBuffer(
            left: range.map { carried.left[$0] * (1 - carried.weight($0)) },
            right: range.map { carried.right[$0] * (1 - carried.weight($0)) }, sampleRate: sampleRate)
    }

    /// Marks `title` at the end of what is queued now.
    package mutating func mark(_ title: String) {
        if marks.count >= Self.maxMarks { marks.removeFirst() }
        marks.append((appended, title))
    }

    /// Forgets every mark.
    package mutating func removeMarks() { marks.removeAll() }

    /// How many frames (at most `limit`) the front may be taken before it reaches the next mark.
    package func framesBeforeMark(limit: Int) -> Int {
        guard let next = marks.first else { return limit }
        return Int(max(0, min(Int64(limit), next.position - consumed)))
    }

    /// The newest title among the marks the front has reached, which are removed; nil when none is reached.
    package mutating func takeReachedMark() -> String? {
        var title: String?
        while let next = marks.first, next.position <= consumed {
            title = next.title
            marks.removeFirst()
        }
        return title
    }

    /// Drops the oldest `frames` (at most all), crossfading from the dropped audio into what follows, so the
    /// stream goes on from where the last released sample left off without a step.
    package mutating func drop(frames: Int) {
        let n = min(max(0, frames), frameCount)
        guard n > 0 else { return }
        let fade = min(Self.crossfade, n)
        let there = min(fade, frameCount - n)
        let from = start
        let to = start + n
        for i in 0..<there {
            let weight = Float(i + 1) / Float(fade + 1)
            left[to + i] = left[from + i] * (1 - weight) + left[to + i] * weight
            right[to + i] = right[from + i] * (1 - weight) + right[to + i] * weight
        }
        // What the crossfade still needs goes on into the audio appended next: cutting everything that waits must
        // not leave a step between the last sample released and the next one to come.
        splice =
            there < fade
            ? Splice(
                left: Array(left[(from + there)..<(from + fade)]), right: Array(right[(from + there)..<(from + fade)]),
                first: there, length: fade) : nil
        start += n
        consumed += Int64(n)
        compact()
    }

    /// Takes `frames` input frames from the front as one buffer; with `nudge` > 0 about `frames × nudge` samples
    /// are left out, with `nudge` < 0 as many are repeated.
    package mutating func take(frames: Int, nudge: Double = 0) -> PCMBuffer {
        let n = min(max(0, frames), frameCount)
        guard n > 0 else { return PCMBuffer(sampleRate: sampleRate) }
        let rate = nudge.isFinite ? max(-0.01, min(0.01, nudge)) : 0
        var outLeft: [Float] = []
        var outRight: [Float] = []
        outLeft.reserveCapacity(n + n / 100 + 1)
        outRight.reserveCapacity(n + n / 100 + 1)
        for i in start..<start + n {
            owed += rate
            if owed >= 1 {
                owed -= 1
                continue  // leave this sample out
            }
            outLeft.append(left[i])
            outRight.append(right[i])
            if owed <= -1 {
                owed += 1
                outLeft.append(left[i])
                outRight.append(right[i])
            }
        }
        start += n
        consumed += Int64(n)
        compact()
        remember(outLeft, outRight)
        return PCMBuffer(left: outLeft, right: outRight, sampleRate: sampleRate)
    }

    /// Storage kept when the queue empties (a second at 48 kHz); a burst's larger buffers go back to the system, so
    /// memory returns to its steady size after it.
    package static let keptCapacity = 48_000

    private mutating func compact() {
        if start == left.count {
            let keep = left.capacity <= Self.keptCapacity
            left.removeAll(keepingCapacity: keep)
            right.removeAll(keepingCapacity: keep)
            start = 0
        } else if start > 1 << 16 && start * 2 > left.count {
            left.removeFirst(start)
            right.removeFirst(start)
            start = 0
        }
    }
}
