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
    /// Its counters, into the station's state (after its inputs' readings', `Pipeline.reportInputs`).
    func report(into state: inout StationState)
    /// New bitrate, complexity and constrained VBR for each output's encoder (`Encoder.retune`), from a reload.
    func retune(_ encoders: [EncoderConfiguration]) throws
    /// The MP3 frames released since the last call, for the pass-through output (only a transcoding chain has them).
    func takePassThrough() -> MP3PassThrough.Chunk?
    /// What reads an input of this station's: one that feeds this chain (a transcoding chain's inputs are decoded,
    /// an edge's relayed).
    func reading(for input: InputConfiguration, station: StationConfiguration) -> any InputReading
    /// The input that plays is back after an outage (its silence filled in): its audio fades in over `minimum`
    /// frames, unless it came back before its audio ran out (it goes on where it was).
    func fadeIn(minimum: Int)
    /// The input that plays stopped: its last `frames` waiting fade out, so the silence after them starts without
    /// a click.
    func fadeOut(frames: Int)
    /// Whether a crossfade still wants the outgoing input's audio, which `acceptOutgoing` takes.
    var takesOutgoing: Bool { get }
    func acceptOutgoing(_ buffer: PCMBuffer)
    /// The outgoing input stopped before its crossfade was over: its last audio fades out quickly.
    func endOutgoing()
    /// A reload changed the station's outputs (`current`, in order; `previous`, the labels of the Ogg Opus outputs
    /// before): the encoders of the outputs kept go on, `arriving` are the new renditions' (made by the station).
    func reshape(_ current: [StationOutput], previous: [String], arriving: [String: Encoder]) throws
}

extension PipelineChain {
    func takePassThrough() -> MP3PassThrough.Chunk? { nil }
}

extension StageChain: PipelineChain {
    func takePassThrough() -> MP3PassThrough.Chunk? { passThrough?.take() }

    func reading(for input: InputConfiguration, station: StationConfiguration) -> any InputReading {
        DecodedInput(input, station: station, chain: self)
    }

    func fadeIn(minimum: Int) {
        guard heldSeconds == 0 else { return }
        beginSwitch(crossfade: 0, minimum: minimum)
    }

    func reshape(_ current: [StationOutput], previous: [String], arriving: [String: Encoder]) throws {
        var kept: [Encoder] = []
        var from: [Int?] = []
        for output in current where output.format == .oggOpus {
            if let index = previous.firstIndex(of: output.label), encoders.indices.contains(index) {
                kept.append(encoders[index])
                from.append(index)
            } else if let made = arriving[output.label] {
                kept.append(made)
                from.append(nil)
            } else {
                throw OutputWithoutEncoder(label: output.label)
            }
        }
        replaceEncoders(kept, from: from)
    }

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
        state.limiter = limiter.map {
            StationState.Limiter(ceiling: $0.ceiling, reduction: $0.reduction, limitedSeconds: $0.limitedSeconds)
        }
    }
}

extension OpusRelayChain: PipelineChain {
    /// Nothing to tune: packets are relayed as they came.
    func retune(_ encoders: [EncoderConfiguration]) {}

    func reading(for input: InputConfiguration, station: StationConfiguration) -> any InputReading {
        RelayedInput(input, chain: self)
    }

    // Packets go out whole, as they came: an edge neither fades nor crossfades (a switch hands the new root's head
    // and tags over, `RelayedInput.takeOver`).
    func fadeIn(minimum: Int) {}
    func fadeOut(frames: Int) {}
    var takesOutgoing: Bool { false }
    func acceptOutgoing(_ buffer: PCMBuffer) {}
    func endOutgoing() {}

    /// An edge has one output, and a reload that changes its renditions restarts the station.
    func reshape(_ current: [StationOutput], previous: [String], arriving: [String: Encoder]) {}

    func release(seconds: Double, nudge: Double) throws {
        // Packets go out whole: a rate nudge has nothing to act on (drift shows as drops or silence instead).
        try release(seconds: seconds)
    }

    func takePagesPerOutput() -> [[OggPage]] { [takePages()] }

    /// Its packets are the station's (a root's demuxer parses no MP3), and its stream errors are decoding errors.
    func report(into state: inout StationState) {
        state.packets = statistics.packets
        state.decodedPackets = 0
        state.readers = 0
        state.decodeErrors += statistics.streamErrors
        state.encoders = 0
        state.encodedSeconds = secondsEncoded
    }
}

/// A reload gave a station an Ogg Opus output that has no encoder (neither kept nor made by the station).
struct OutputWithoutEncoder: Error, CustomStringConvertible {
    let label: String
    var description: String { "output \(label) has no encoder: its listeners get no audio" }
}

extension PipelineChain {
    var heldSeconds: Double { queuedSeconds }
}
