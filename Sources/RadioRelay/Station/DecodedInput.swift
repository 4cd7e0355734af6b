import RadioRelayMedia
import RadioRelaySystem

/// A transcoding station's input, read to the common format: its `InputDecoder` (ICY → Parser → Reader for MP3; a
/// live source's Ogg Opus through the Opus stage), its level meter, and its newest decoded audio kept while it does
/// not play (what a switch to it starts with, at most `keptSeconds`). What it decodes goes to the station's
/// `StageChain` while it plays. The place for a gain stage of its own is here, between the decoder and everything
/// that reads its audio.
final class DecodedInput: InputReading {
    let decoder: InputDecoder
    let chain: StageChain
    /// The newest decoded audio while it does not play, bounded.
    private(set) var kept: PCMQueue
    private(set) var meter: LevelMeter
    /// Its loudness stage (`loudness = LUFS`); nil: off.
    private(set) var loudness: InputLoudness?

    /// The newest decoded audio kept while it does not play: enough for a crossfade into it.
    static let keptSeconds = 1.0

    init(_ configuration: InputConfiguration, station: StationConfiguration, chain: StageChain) {
        var decoding = InputDecoder.Configuration()
        decoding.commonRate = station.commonRate
        // Live: a frame goes on as soon as it is complete, and a live stream's LAME tag says nothing about where the
        // station's stream ends; a file's says where each pass of its loop starts and ends.
        decoding.confirmsFrames = false
        decoding.gapless = configuration.isFile
        decoding.maxTagLength = Parser.liveTagLimit
        decoding.recognisesFormat = configuration.isLive
        decoding.fastResampling = station.encoder.lowDelay
        decoder = InputDecoder(decoding)
        self.chain = chain
        kept = PCMQueue(sampleRate: station.commonRate)
        meter = LevelMeter(thresholdDB: station.failover.deadAirLevel, rate: station.commonRate)
        setLoudness(station)
    }

    func read(
        _ bytes: UnsafeRawBufferPointer, _ role: ReadingRole, observe: (InputObservation) throws -> Void
    ) throws {
        try decoder.feed(bytes) { try route($0, role, observe) }
    }

    func endPass(_ role: ReadingRole, observe: (InputObservation) throws -> Void) throws {
        try decoder.endPass { try route($0, role, observe) }
    }

    /// What the decoder yields: the pipeline's observations always, the chain's when it plays.
    private func route(
        _ output: InputDecoder.Output, _ role: ReadingRole, _ observe: (InputObservation) throws -> Void
    ) throws {
        switch output {
        case .format(let format):
            // An Ogg Opus source has no MP3 frames: the pass-through output sounds silent while it plays.
            if role.plays { chain.inputHasFrames = format.codec == .mpeg }
            try observe(.format(format))
        case .metadata(let fields):
            if let title = Sanitized.title(in: fields) { try observe(.title(title)) }
        case .frame:
            break
        case .pcm(let decoded):
            // Dead air is judged on the input as it comes; everything after reads it at the station's loudness.
            var reading: LevelMeter.Reading?
            if role.meters { reading = meter.feed(decoded) }
            let buffer = loudness?.process(decoded) ?? decoded
            var audio = InputAudio(buffer: buffer)
            audio.seconds = Double(buffer.frameCount) / Double(max(1, buffer.sampleRate))
            if let reading, reading.windows > 0 { audio.quiet = reading.lastQuiet }
            try observe(.audio(audio))
            if role.plays { try chain.accept(.pcm(buffer)) } else { keep(buffer) }
            return
        }
        if role.plays { try chain.accept(output) }
    }

    /// Keeps `buffer` as its newest audio, dropping the oldest beyond `keptSeconds`.
    func keep(_ buffer: PCMBuffer) {
        kept.append(buffer)
        let limit = Int(Self.keptSeconds * Double(kept.sampleRate))
        if kept.frameCount > limit { kept.drop(frames: kept.frameCount - limit) }
    }

    func restart(metaInterval: Int?) {
        decoder.restart(metaInterval: metaInterval)
    }

    /// The old input's waiting tail fades out, this one's audio fades in over it; its newest kept audio (a hot
    /// standby's) goes first, as much of it as `handover.keptFrames` says.
    func takeOver(_ handover: InputHandover) throws {
        chain.beginSwitch(
            crossfade: handover.crossfade, minimum: handover.minimum, outgoingContinues: handover.outgoingContinues)
        chain.inputHasFrames = handover.format?.codec != .opus
        if let format = handover.format, format != handover.stationFormat { try chain.accept(.format(format)) }
        if let wanted = handover.keptFrames, kept.frameCount > wanted { kept.drop(frames: kept.frameCount - wanted) }
        if kept.frameCount > 0 { try chain.accept(.pcm(kept.take(frames: kept.frameCount))) }
    }

    func announce(title: String, plays: Bool) throws {
        guard plays else { return }
        try chain.accept(.metadata(["StreamTitle": title]))
    }

    func forgetKeptAudio() {
        kept.removeAll()
    }

    func reconfigure(_ station: StationConfiguration) {
        meter = LevelMeter(thresholdDB: station.failover.deadAirLevel, rate: station.commonRate)
        setLoudness(station)
    }

    /// The station's loudness target, in place (a reload): a running stage keeps its measurement and gain.
    func setLoudness(_ station: StationConfiguration) {
        guard let target = station.loudness else {
            loudness = nil
            return
        }
        if let loudness {
            loudness.retarget(target, limiter: station.truePeak)
        } else {
            loudness = InputLoudness(target: target, limiter: station.truePeak, rate: station.commonRate)
        }
    }

    var expectedAudio: String {
        switch decoder.codec {
        case .opus?: return "Opus audio"
        case .mpeg?: return "MPEG audio"
        case nil: return "audio"
        }
    }

    var counters: ReadingCounters {
        ReadingCounters(
            packets: decoder.parser.statistics.packets, decoded: decoder.decoded.packets,
            skippedBytes: decoder.parser.statistics.bytesSkipped, errors: decoder.decoded.errors,
            readers: decoder.readersMade)
    }
}

@available(*, unavailable) extension DecodedInput: Sendable {}
