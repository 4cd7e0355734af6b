import Glibc

/// The gain curves of a change of input in the common format: equal power (a quarter of a sine and a cosine, whose
/// squares add up to one), so the loudness does not dip in the middle of a crossfade, and both ends start or finish
/// at zero, so a switch never clicks. `PCMQueue.beginSwitch` fades the outgoing input's tail out along `outgoing`
/// and mixes the incoming input's first frames in along `incoming`.
package enum Crossfade {
    /// The outgoing input's gain at frame `position` of a fade of `length` frames: 1 before the first, 0 at the
    /// last.
    package static func outgoing(_ position: Int, of length: Int) -> Float {
        guard length > 0 else { return 0 }
        let x = Double(min(max(position + 1, 0), length)) / Double(length)
        return Float(cos(x * Double.pi / 2))
    }

    /// The incoming input's gain at frame `position` of a fade of `length` frames: 0 at the first, rising to 1.
    package static func incoming(_ position: Int, of length: Int) -> Float {
        guard length > 0 else { return 1 }
        let x = Double(min(max(position, 0), length)) / Double(length)
        return Float(sin(x * Double.pi / 2))
    }
}

/// A switch of input under way in a `PCMQueue`: where the outgoing input's faded tail ends (in the queue's
/// positions), where the incoming audio is mixed in next, and how far its fade-in is.
package struct SwitchFade: Sendable, Equatable {
    /// The position (frames ever appended) at which the outgoing audio ends.
    package var regionEnd: Int64
    /// The shortest fade-in of the incoming input, frames (when little or none of the outgoing one is left).
    package var minimum: Int
    /// The incoming fade's length, set by its first frames, and frames of it done.
    package var length: Int?
    package var done = 0
    /// The position the next incoming frame is mixed at (below `regionEnd`), or appended from.
    package var mixAt: Int64 = 0

    package var isFinished: Bool { length.map { done >= $0 } ?? false }
}

/// A crossfade with an outgoing input that goes on delivering while it fades out (`PCMQueue.beginSwitch`): both
/// inputs' audio is placed by position from `origin`, the outgoing one along `Crossfade.outgoing`, the incoming one
/// along `Crossfade.incoming`, whichever arrives first.
package struct CrossMix: Sendable {
    /// The position (frames ever appended) where the fade starts, and its length.
    package var origin: Int64
    package var length: Int
    /// Where the outgoing input's next frame goes, and the incoming one's.
    package var oldAt: Int64
    package var newAt: Int64
    /// The outgoing input's part is over (its fade done, or it stopped).
    package var outgoingEnded = false
    /// The outgoing input's newest contributions (gain applied), the last at `oldAt - 1`: what an early end fades
    /// out (`PCMQueue.crossfade` of them are needed; at most twice as many are kept).
    package var old: [(Float, Float)] = []

    package init(origin: Int64, length: Int, oldAt: Int64, newAt: Int64) {
        self.origin = origin
        self.length = length
        self.oldAt = oldAt
        self.newAt = newAt
    }
}
