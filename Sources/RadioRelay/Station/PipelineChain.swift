import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What a station's pipeline drives, whatever the upstream: the transcoding `StageChain` (MP3 in, decoded once, one
/// Encoder per output) or an edge relay's `OpusRelayChain` (another relay's Ogg Opus in, its packets re-paged). Both
/// take what the input that plays yields (`StageChain.accept`, `OpusRelayChain.accept`), hold audio for the stream
/// clock, release what it says is due, fill silence, and hand out pages per output and the input's events.
protocol PipelineChain: AnyObject {
    /// Audio waiting for `release`, in seconds.
    var queuedSeconds: Double { get }
    /// Audio held, releasable or not yet (a crossfade's new input ahead of its old one), in seconds: what a paced
    /// input's reading is judged by.
    var heldSeconds: Double { get }
    /// Audio handed to the outputs so far (silence included): the stream's clock.
    var secondsEncoded: Double { get }
    /// Whether a new title starts a chained Ogg link.
    var chainsTitles: Bool { get set }
    func drop(seconds: Double) throws
    func release(seconds: Double, nudge: Double) throws
    /// `frames` samples at the common rate.
    func encodeSilence(frames: Int) throws
    /// The pages completed since the last call, one array per output.
    func takePagesPerOutput() -> [[OggPage]]
    func takeEvents() -> [StageChain.Event]
    /// Its counters, into the station's state.
    func report(into state: inout StationState)
    /// New bitrate, complexity and constrained VBR for each output's encoder (`Encoder.retune`), from a reload.
    func retune(_ encoders: [EncoderConfiguration]) throws
    /// The MP3 frames released since the last call, for the pass-through output (only a transcoding chain has them).
    func takePassThrough() -> MP3PassThrough.Chunk?
}

extension PipelineChain {
    func takePassThrough() -> MP3PassThrough.Chunk? { nil }
}

extension StageChain: PipelineChain {
    func takePassThrough() -> MP3PassThrough.Chunk? { passThrough?.take() }

    func retune(_ configurations: [EncoderConfiguration]) throws {
        for (encoder, configuration) in zip(encoders, configurations) {
            // The encoder takes the common rate as its input (`makeChain`), whatever the output's settings say.
            var wanted = configuration
            wanted.inputRate = encoder.configuration.inputRate
            if encoder.configuration != wanted { try encoder.retune(wanted) }
        }
    }

    /// Its encoders; the inputs' decoding counters come from the pipeline (each input decodes with its own).
    func report(into state: inout StationState) {
        state.encoders = encoders.count
        state.encodedSeconds = secondsEncoded
    }
}

extension OpusRelayChain: PipelineChain {
    /// Nothing to tune: packets are relayed as they came.
    func retune(_ encoders: [EncoderConfiguration]) {}

    func release(seconds: Double, nudge: Double) throws {
        // Packets go out whole: a rate nudge has nothing to act on (drift shows as drops or silence instead).
        try release(seconds: seconds)
    }

    func takePagesPerOutput() -> [[OggPage]] { [takePages()] }

    func report(into state: inout StationState) {
        state.packets = statistics.packets
        state.decodedPackets = 0
        state.readers = 0
        state.encoders = 0
        state.encodedSeconds = secondsEncoded
    }
}

extension PipelineChain {
    var heldSeconds: Double { queuedSeconds }
}
