/// A change of input in the chain, live, and an input that stops: passed on to the queue of decoded audio
/// (`PCMQueue+Switch.swift`).
extension StageChain {
    /// A change of input (live, with several inputs): the last `crossfade` frames of the old input's waiting audio
    /// fade out, and the new input's audio `accept` is given next fades in over them (at least over `minimum`
    /// frames; see `PCMQueue.beginSwitch`).
    public func beginSwitch(crossfade: Int, minimum: Int, outgoingContinues: Bool = false) {
        queue.beginSwitch(crossfade: crossfade, minimum: minimum, outgoingContinues: outgoingContinues)
    }

    /// The outgoing input's decoded audio during a crossfade with it (`beginSwitch(…, outgoingContinues: true)`).
    public func acceptOutgoing(_ pcm: PCMBuffer) {
        queue.appendOutgoing(pcm)
    }

    /// Whether a crossfade still wants the outgoing input's audio.
    public var takesOutgoing: Bool { queue.takesOutgoing }

    /// The outgoing input stopped before its crossfade was over: its last audio fades out quickly.
    public func endOutgoing() {
        queue.endOutgoing()
    }

    /// The input stopped (live): its last `frames` waiting fade out, so the silence after them starts without a
    /// click.
    public func fadeOut(frames: Int) {
        queue.fadeOutTail(frames: frames)
    }
}
