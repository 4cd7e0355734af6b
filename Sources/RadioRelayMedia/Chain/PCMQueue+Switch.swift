/// The switch's half of `PCMQueue`: an input that stops fades out (`fadeOutTail`), and a change of input crossfades
/// — into the old input's waiting tail when it ended (`SwitchFade`), or with its next audio while it still delivers
/// (`CrossMix`: both placed by position, released only as far as both have come).
extension PCMQueue {
    /// Fades the last `frames` waiting out to silence along the equal-power curve (returns how many it faded): the
    /// end of an input that stopped, so that what follows (silence, or another input fading in) starts without a
    /// step. When fewer wait (the station runs at its lead, so a paced input's last audio is mostly released
    /// already), the input's audio is continued (`continuation`) to `frames` first: a fade over a few samples is a
    /// click.
    @discardableResult
    package mutating func fadeOutTail(frames: Int) -> Int {
        // The input that plays stopped: a crossfade into it is over, what waits is all there is.
        mix = nil
        let wanted = max(0, frames)
        if endsAudible && frameCount < wanted, let more = continuation(wanted - frameCount) {
            left.append(contentsOf: more.left)
            right.append(contentsOf: more.right)
            appended += Int64(more.left.count)
        }
        endsAudible = false
        let n = min(wanted, frameCount)
        guard n > 0 else { return 0 }
        Self.fadeOut(&left, &right, last: n)
        return n
    }

    /// Fades the last `n` samples of both channels out along the equal-power curve.
    static func fadeOut(_ left: inout [Float], _ right: inout [Float], last n: Int) {
        let first = left.count - n
        for i in 0..<n {
            let gain = Crossfade.outgoing(i, of: n)
            left[first + i] *= gain
            right[first + i] *= gain
        }
    }

    /// The audio ran out while an input's audio was the last released (it hangs, or is late beyond the lead): its
    /// `frames` more, continued from what was released and faded out, to go before the silence; the next audio to
    /// come fades in (over `fadeIn` frames). Nil when nothing waits to be continued (no audio yet, or it ended in a
    /// fade already) or audio still waits.
    package mutating func takeUnderrunTail(frames: Int, fadeIn: Int) -> PCMBuffer? {
        guard endsAudible, frameCount == 0, frames > 0, var more = continuation(frames) else { return nil }
        endsAudible = false
        Self.fadeOut(&more.left, &more.right, last: more.left.count)
        recentLeft.removeAll(keepingCapacity: true)
        recentRight.removeAll(keepingCapacity: true)
        if fade == nil && mix == nil && fadeIn > 0 {
            fade = SwitchFade(regionEnd: appended, minimum: fadeIn, mixAt: appended)
        }
        return PCMBuffer(left: more.left, right: more.right, sampleRate: sampleRate)
    }

    /// The newest frames released, kept for `continuation` (a tenth of a second).
    var historyFrames: Int { max(2, sampleRate / 10) }

    mutating func remember(_ newLeft: [Float], _ newRight: [Float]) {
        recentLeft.append(contentsOf: newLeft)
        recentRight.append(contentsOf: newRight)
        if recentLeft.count > 2 * historyFrames {
            recentLeft.removeFirst(recentLeft.count - historyFrames)
            recentRight.removeFirst(recentRight.count - historyFrames)
        }
    }

    /// `count` frames that go on from the newest audio (what waits, after the newest released): that audio read
    /// backwards from its last sample, and forwards again when it is shorter, so the first frame continues from
    /// the last one without a step and no step is larger than the audio's own. Nil with fewer than two frames.
    func continuation(_ count: Int) -> (left: [Float], right: [Float])? {
        let sourceLeft = recentLeft.suffix(historyFrames) + left[start...]
        let sourceRight = recentRight.suffix(historyFrames) + right[start...]
        let m = min(sourceLeft.count, sourceRight.count)
        guard m >= 2, count > 0 else { return nil }
        let period = 2 * (m - 1)
        var outLeft: [Float] = []
        var outRight: [Float] = []
        outLeft.reserveCapacity(count)
        outRight.reserveCapacity(count)
        for k in 0..<count {
            // Back from the last frame, bouncing between the first and the last.
            let folded = ((m - 2 - k) % period + period) % period
            let index = folded < m ? folded : period - folded
            outLeft.append(sourceLeft[sourceLeft.startIndex + index])
            outRight.append(sourceRight[sourceRight.startIndex + index])
        }
        return (outLeft, outRight)
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
                left[at] *= gain
                right[at] *= gain
                if i >= n - Self.crossfade { made.old.append((left[at], right[at])) }
            }
            mix = made
            return
        }
        // An old input whose audio is all but released is continued to the shortest fade first (no click).
        let faded = fadeOutTail(frames: endsAudible ? max(n, minimum) : n)
        fade = SwitchFade(regionEnd: appended, minimum: max(1, minimum), mixAt: appended - Int64(faded))
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
            // The front passed it (it was late): not heard.
            if position >= consumed { place(sample.0, sample.1, at: position) }
        }
        if Int(current.oldAt - current.origin) >= current.length { current.outgoingEnded = true }
        // Only the newest contributions are ever taken back (`endOutgoing`).
        if current.old.count > 2 * Self.crossfade { current.old.removeFirst(current.old.count - Self.crossfade) }
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
    mutating func appendIncoming(_ buffer: PCMBuffer) {
        guard var current = mix else { return }
        let count = min(buffer.left.count, buffer.right.count)
        for i in 0..<count {
            // The front may have passed where the next frame belonged (the outgoing input ran ahead): from the
            // front on.
            let position = max(current.newAt, consumed)
            let into = Int(min(position - current.origin, Int64(current.length)))
            let gain = Crossfade.incoming(into, of: current.length)
            place(buffer.left[i] * gain, buffer.right[i] * gain, at: position)
            current.newAt = position + 1
        }
        mix = current
        // A new input more than a second ahead of the old one (a burst, an upstream faster than real time) would
        // pile up behind the front for as long as the fade lasts: the old input's part ends here instead.
        if !current.outgoingEnded && current.newAt - current.oldAt > Int64(sampleRate) { endOutgoing() }
        finishMixIfDone()
    }

    /// Adds a crossfade's sample at `position` (not before the front): mixed into what is there, or appended when
    /// it is the next one.
    private mutating func place(_ leftSample: Float, _ rightSample: Float, at position: Int64) {
        if position < appended {
            let at = start + Int(position - consumed)
            left[at] += leftSample
            right[at] += rightSample
        } else {
            left.append(leftSample)
            right.append(rightSample)
            appended += 1
        }
    }

    private mutating func finishMixIfDone() {
        guard let current = mix, current.outgoingEnded, current.newAt - current.origin >= Int64(current.length)
        else { return }
        mix = nil
    }

    /// Appends the new input's `buffer` during a switch: mixed into the old input's faded tail while it lasts, faded
    /// in, then appended.
    mutating func appendFading(_ buffer: PCMBuffer, _ fade: inout SwitchFade) {
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
}
