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
    private var left: [Float] = []
    private var right: [Float] = []
    private var start = 0
    /// Fractional samples owed by the rate correction, carried from one release to the next.
    private var owed = 0.0
    /// Frames ever appended, and ever taken or dropped: the positions marks refer to.
    private var appended: Int64 = 0
    private var consumed: Int64 = 0
    /// Titles marked at a position (the frames appended before them), oldest first.
    private var marks: [(position: Int64, title: String)] = []
    /// A change of input under way (`beginSwitch`).
    private var fade: SwitchFade?
    /// A crossfade with an outgoing input that goes on delivering (`beginSwitch(…, outgoingContinues: true)`).
    private var mix: CrossMix?
    /// A drop that left less after it than its crossfade needs (the clock dropping all that waited, the stream at
    /// its lead): the start of the dropped audio — what would have followed the last sample released — still to be
    /// crossfaded into the audio appended next.
    private var splice: Splice?

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

    /// Fades the last `frames` waiting (at most all) out to silence along the equal-power curve: the end of an input
    /// that stopped, so that what follows (silence, or another input fading in) starts without a step.
    package mutating func fadeOutTail(frames: Int) {
        // The input that plays stopped: a crossfade into it is over, what waits is all there is.
        mix = nil
        let n = min(max(0, frames), frameCount)
        guard n > 0 else { return }
        let first = left.count - n
        for i in 0..<n {
            let gain = Crossfade.outgoing(i, of: n)
            left[first + i] *= gain
            right[first + i] *= gain
        }
    }

    /// A change of input (see `Crossfade`): the last `crossfade` frames waiting (at most all) fade out now, and the
    /// audio appended next — the new input's — is mixed into them, fading in, the rest of its fade appended after
    /// them. When less than `minimum` frames of the old input wait, the new one fades in over `minimum` frames from
    /// wherever the front is when it arrives (after silence, if the clock had to fill some). Audio the clock
    /// releases meanwhile is simply released: the fade carries on from the new front.
    package mutating func beginSwitch(crossfade: Int, minimum: Int, outgoingContinues: Bool = false) {
        if mix != nil { endOutgoing() }
        mix = nil
        if let tail = takeSpliceTail() {
            // A cut left its crossfade unfinished: the old input's audio after the cut ends the old input, fading
            // out, and the new one is mixed into it.
            left.append(contentsOf: tail.left)
            right.append(contentsOf: tail.right)
            appended += Int64(tail.frameCount)
        }
        let n = min(max(0, crossfade), frameCount)
        if outgoingContinues && crossfade > 0 {
            // The whole crossfade from the waiting tail on: the tail starts fading out along it, the outgoing
            // input's next audio (`appendOutgoing`) carries on fading out, the incoming one fades in from the tail.
            fade = nil
            let origin = appended - Int64(n)
            var made = CrossMix(origin: origin, length: crossfade, oldAt: appended, newAt: origin)
            for i in 0..<n {
                let gain = Crossfade.outgoing(i, of: crossfade)
                let at = left.count - n + i
                made.old.append((left[at] * gain, right[at] * gain))
                left[at] *= gain
                right[at] *= gain
            }
            mix = made
            return
        }
        fadeOutTail(frames: n)
        fade = SwitchFade(regionEnd: appended, minimum: max(1, minimum), mixAt: appended - Int64(n))
    }

    /// Whether a switch's fade is still under way.
    package var isSwitching: Bool { fade != nil || mix != nil }

    /// Whether the outgoing input's audio is still wanted (a crossfade with it under way).
    package var takesOutgoing: Bool { mix.map { !$0.outgoingEnded } ?? false }

    /// Frames that may be released: during a crossfade with an outgoing input, only as far as both inputs' audio
    /// has come (the front must not pass audio of one that is still to be mixed in).
    package var readyCount: Int {
        guard let mix else { return frameCount }
        // Once the outgoing input's part is over, the incoming one must still reach the end of it.
        let until = mix.outgoingEnded ? mix.newAt : min(mix.oldAt, mix.newAt)
        return Int(max(0, min(Int64(frameCount), until - consumed)))
    }

    /// The outgoing input's audio during a crossfade: mixed in fading out, until the fade is over.
    package mutating func appendOutgoing(_ buffer: PCMBuffer) {
        guard var current = mix, !current.outgoingEnded else { return }
        let count = min(buffer.left.count, buffer.right.count)
        for i in 0..<count {
            let position = current.oldAt
            let into = Int(position - current.origin)
            guard into < current.length else {
                current.outgoingEnded = true
                break
            }
            let gain = Crossfade.outgoing(into, of: current.length)
            let sample = (buffer.left[i] * gain, buffer.right[i] * gain)
            current.old.append(sample)
            current.oldAt += 1
            guard position >= consumed else { continue }  // the front passed it (it was late): not heard
            if position < appended {
                let at = start + Int(position - consumed)
                left[at] += sample.0
                right[at] += sample.1
            } else {
                left.append(sample.0)
                right.append(sample.1)
                appended += 1
            }
        }
        if Int(current.oldAt - current.origin) >= current.length { current.outgoingEnded = true }
        mix = current
        finishMixIfDone()
    }

    /// The outgoing input stopped delivering before its fade was over (it failed, or stalled): its last
    /// audio not yet released fades out over a few milliseconds, and the incoming input goes on alone.
    package mutating func endOutgoing() {
        guard var current = mix, !current.outgoingEnded else { return }
        current.outgoingEnded = true
        let k = min(Self.crossfade, current.old.count)
        for j in 0..<k {
            let position = current.oldAt - Int64(k - j)
            guard position >= consumed, position < appended else { continue }
            let keep = Float(k - j) / Float(k + 1)
            let contribution = current.old[current.old.count - k + j]
            let at = start + Int(position - consumed)
            left[at] -= contribution.0 * (1 - keep)
            right[at] -= contribution.1 * (1 - keep)
        }
        mix = current
        finishMixIfDone()
    }

    /// The incoming input's audio during a crossfade: mixed in fading in where the outgoing one's audio is, then
    /// appended (at full level once the fade is over).
    private mutating func appendIncoming(_ buffer: PCMBuffer) {
        guard var current = mix else { return }
        let count = min(buffer.left.count, buffer.right.count)
        for i in 0..<count {
            // The front may have passed where the next frame belonged (the outgoing input ran ahead): from the
            // front on.
            let position = max(current.newAt, consumed)
            let into = Int(min(position - current.origin, Int64(current.length)))
            let gain = Crossfade.incoming(into, of: current.length)
            if position < appended {
                let at = start + Int(position - consumed)
                left[at] += buffer.left[i] * gain
                right[at] += buffer.right[i] * gain
            } else {
                left.append(buffer.left[i] * gain)
                right.append(buffer.right[i] * gain)
                appended += 1
            }
            current.newAt = position + 1
        }
        mix = current
        // A new input more than a second ahead of the old one (a burst, an upstream faster than real time) would
        // pile up behind the front for as long as the fade lasts: the old input's part ends here instead.
        if !current.outgoingEnded && current.newAt - current.oldAt > Int64(sampleRate) { endOutgoing() }
        finishMixIfDone()
    }

    private mutating func finishMixIfDone() {
        guard let current = mix, current.outgoingEnded, current.newAt - current.origin >= Int64(current.length)
        else { return }
        mix = nil
    }

    /// Appends the new input's `buffer` during a switch: mixed into the old input's faded tail while it lasts, faded
    /// in, then appended.
    private mutating func appendFading(_ buffer: PCMBuffer, _ fade: inout SwitchFade) {
        let count = min(buffer.left.count, buffer.right.count)
        if fade.length == nil {
            fade.mixAt = max(fade.mixAt, consumed)
            fade.length = max(Int(max(0, fade.regionEnd - fade.mixAt)), fade.minimum)
        }
        let length = fade.length ?? fade.minimum
        var index = 0
        // Mixed into what is left of the old input's tail (the front may have passed part of it).
        fade.mixAt = max(fade.mixAt, consumed)
        while index < count && fade.mixAt < fade.regionEnd {
            let at = start + Int(fade.mixAt - consumed)
            let gain = Crossfade.incoming(fade.done, of: length)
            left[at] += buffer.left[index] * gain
            right[at] += buffer.right[index] * gain
            fade.done += 1
            fade.mixAt += 1
            index += 1
        }
        guard index < count else { return }
        let rest = count - index
        left.reserveCapacity(left.count + rest)
        right.reserveCapacity(right.count + rest)
        for i in index..<count {
            let gain = fade.done < length ? Crossfade.incoming(fade.done, of: length) : 1
            left.append(buffer.left[i] * gain)
            right.append(buffer.right[i] * gain)
            fade.done += 1
        }
        appended += Int64(rest)
        fade.mixAt = appended
        fade.regionEnd = min(fade.regionEnd, appended)
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
