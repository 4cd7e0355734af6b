import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What a station's pipeline drives, whatever the upstream: the transcoding `StageChain` (MP3 in, decoded once, one
/// Encoder per output) or an edge relay's `OpusRelayChain` (another relay's Ogg Opus in, its packets re-paged). Both
/// take bytes, hold audio for the stream clock, release what it says is due, fill silence, and hand out pages per
/// output and the upstream's events.
protocol PipelineChain: AnyObject {
    /// Audio waiting for `release`, in seconds.
    var queuedSeconds: Double { get }
    /// Audio handed to the outputs so far (silence included): the stream's clock.
    var secondsEncoded: Double { get }
    /// Audio units taken from the upstream so far (MP3 frames, Opus packets): what tells a live upstream from one
    /// that sends only other bytes.
    var packetsSeen: Int { get }
    /// Whether a new title starts a chained Ogg link.
    var chainsTitles: Bool { get set }
    /// A new connection (`metaInterval`: its ICY metadata interval, if any).
    func restart(metaInterval: Int?)
    func feed(_ bytes: UnsafeRawBufferPointer) throws
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
    /// Why the upstream's stream cannot be relayed (once per connection): the pipeline drops the connection with it.
    func takeRefusal() -> String?
    /// The MP3 frames released since the last call, for the pass-through output (only a transcoding chain has them).
    func takePassThrough() -> MP3PassThrough.Chunk?
}

extension PipelineChain {
    func takeRefusal() -> String? { nil }
    func takePassThrough() -> MP3PassThrough.Chunk? { nil }
}

extension StageChain: PipelineChain {
    var packetsSeen: Int { parser.statistics.packets }

    func takePassThrough() -> MP3PassThrough.Chunk? { passThrough?.take() }

    func retune(_ configurations: [EncoderConfiguration]) throws {
        for (encoder, configuration) in zip(encoders, configurations) {
            // The encoder takes the common rate as its input (`makeChain`), whatever the output's settings say.
            var wanted = configuration
            wanted.inputRate = encoder.configuration.inputRate
            if encoder.configuration != wanted { try encoder.retune(wanted) }
        }
    }

    func report(into state: inout StationState) {
        state.packets = parser.statistics.packets
        state.skippedBytes = parser.statistics.bytesSkipped
        state.decodeErrors = reader?.statistics.decodeErrors ?? 0
        state.decodedPackets = reader?.statistics.packets ?? 0
        state.readers = readersMade
        state.encoders = encoders.count
        state.encodedSeconds = secondsEncoded
    }
}

extension OpusRelayChain: PipelineChain {
    var packetsSeen: Int { statistics.packets }

    /// Nothing to tune: packets are relayed as they came.
    func retune(_ encoders: [EncoderConfiguration]) {}

    func restart(metaInterval: Int?) { restart() }

    func release(seconds: Double, nudge: Double) throws {
        // Packets go out whole: a rate nudge has nothing to act on (drift shows as drops or silence instead).
        try release(seconds: seconds)
    }

    func takePagesPerOutput() -> [[OggPage]] { [takePages()] }

    func report(into state: inout StationState) {
        state.packets = statistics.packets
        state.skippedBytes = demuxStatistics.bytesSkipped
        state.decodeErrors = demuxStatistics.badPages + demuxStatistics.droppedPackets + statistics.streamErrors
        state.decodedPackets = 0
        state.readers = 0
        state.encoders = 0
        state.encodedSeconds = secondsEncoded
    }
}
