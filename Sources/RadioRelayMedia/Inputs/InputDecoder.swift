import RadioRelaySystem

/// One input's decoding: ICY demux → Parser → Reader, bytes in, the common format out — the seed's Reader job, any
/// source format to the common one — with what comes beside the audio: each format (the first and every change),
/// each ICY metadata block's fields, and each MP3 frame as it came (for an MP3 pass-through output).
///
/// A station decodes each of its inputs with one of these (the one that plays, and those kept decoding beside it:
/// a hot standby, an input silenced by dead air); `StageChain` decodes with one too. Every method is synchronous
/// and throws what a stage threw. The Reader is made at the first frame, so that it can take the LAME tag the Parser
/// found before it.
public final class InputDecoder {
    public struct Configuration: Sendable {
        /// The common rate of the Reader's buffers (48 000 or 44 100 Hz).
        public var commonRate = OpusClock.rate
        /// See `Parser.init(confirmsFrames:)`: true for files, false for live relaying (one frame sooner).
        public var confirmsFrames = true
        /// Trim the encoder delay and padding a LAME tag announces (files; a live stream has no meaningful end).
        public var gapless = true
        /// The longest ID3v2 tag the Parser skips (see `Parser.init(confirmsFrames:maxTagLength:)`).
        public var maxTagLength = Int.max
        /// Recognise the stream from its first bytes (a live source: clients say `audio/mpeg` whatever they send):
        /// Ogg Opus is decoded by an `OpusStreamDecoder`, MP3 as always, and what is recognisably neither (Ogg
        /// Vorbis or FLAC, AAC, FLAC, WAV, WebM) is refused with `UnsupportedFormat`.
        public var recognisesFormat = false
        /// The Reader resamples fast (`Reader.fastResampling`): low-latency mode.
        public var fastResampling = false

        public init() {}
    }

    /// What the decoder hands on, in the order it came.
    public enum Output {
        /// The format: the first frame's, and every change.
        case format(DataFormat)
        /// A complete ICY metadata block's fields (`StreamTitle`, …).
        case metadata([String: String])
        /// An MP3 frame as it came, before its audio (for a pass-through output).
        case frame(AudioPacket)
        /// Decoded audio in the common format.
        case pcm(PCMBuffer)
    }

    public let configuration: Configuration
    public let parser: Parser
    public private(set) var reader: Reader?
    /// Readers made over the decoder's life: 1 once audio flowed (the passes of a looping file count once).
    public private(set) var readersMade = 0
    /// The next Reader is a looping file's next pass (`endPass`), not another decoding.
    private var nextPass = false
    /// The packets decoded and decode errors of the Readers of earlier passes.
    private var earlierPasses = (packets: 0, errors: 0)

    /// MP3 packets decoded and decode errors, every pass's Reader counted.
    public var decoded: (packets: Int, errors: Int) {
        (
            earlierPasses.packets + (reader?.statistics.packets ?? 0),
            earlierPasses.errors + (reader?.statistics.decodeErrors ?? 0)
        )
    }
    private var icy: ICYDemuxer?
    /// What the connection's bytes are, once its first ones were seen (`recognisesFormat`); nil: not yet.
    public private(set) var codec: DataFormat.Codec?
    /// The first bytes of a connection while they are too few to recognise.
    private var opening: [UInt8] = []
    private var opus: OpusStreamDecoder?

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        parser = Parser(confirmsFrames: configuration.confirmsFrames, maxTagLength: configuration.maxTagLength)
    }

    /// A new connection: forgets sync and the carry-over; `metaInterval` is its `icy-metaint`.
    public func restart(metaInterval: Int?) {
        parser.reset()
        icy = metaInterval.map { ICYDemuxer(interval: $0) }
        codec = configuration.recognisesFormat ? nil : .mpeg
        opening = []
        opus?.reset()
    }

    /// Decodes bytes (ICY-framed when the connection announced a metadata interval), handing each output to `sink`.
    public func feed(_ bytes: UnsafeRawBufferPointer, _ sink: (Output) throws -> Void) throws {
        if var demuxer = icy {
            defer { icy = demuxer }
            try demuxer.demux(
                bytes, audio: { try feedAudio($0, sink) }, metadata: { try sink(.metadata($0)) })
        } else {
            try feedAudio(bytes, sink)
        }
    }

    /// Decodes audio bytes (no ICY framing): MP3, or what the first bytes were recognised as.
    public func feedAudio(_ bytes: UnsafeRawBufferPointer, _ sink: (Output) throws -> Void) throws {
        switch codec {
        case .mpeg?:
            try parser.parse(bytes) { try handle($0, sink) }
        case .opus?:
            try feedOpus(bytes, sink)
        case nil:
            opening.append(contentsOf: bytes)
            guard let recognised = try SourceFormat.recognise(opening) else { return }
            codec = recognised
            let first = opening
            opening = []
            try first.withUnsafeBytes { try feedAudio($0, sink) }
        }
    }

    private func feedOpus(_ bytes: UnsafeRawBufferPointer, _ sink: (Output) throws -> Void) throws {
        let decoder = opus ?? OpusStreamDecoder(commonRate: configuration.commonRate)
        opus = decoder
        try decoder.feed(bytes) { output in
            switch output {
            case .stream(let channels): try sink(.format(.opus(channels: channels)))
            case .title(let title): try sink(.metadata(["StreamTitle": title]))
            case .pcm(let pcm): try sink(.pcm(pcm))
            }
        }
    }

    /// Opus packets decoded and refused (an Ogg Opus source).
    public var opusPackets: (decoded: Int, rejected: Int) { (opus?.packets ?? 0, opus?.rejectedPackets ?? 0) }

    /// The Parser's last frame and the Reader's tail; false when no audio frame was ever found.
    public func finish(_ sink: (Output) throws -> Void) throws -> Bool {
        guard codec != .opus else { return (opus?.packets ?? 0) > 0 }
        try parser.finish { try handle($0, sink) }
        guard let reader else { return false }
        let tail = try reader.finish()
        if !tail.isEmpty { try sink(.pcm(tail)) }
        return true
    }

    private func handle(_ event: Parser.Event, _ sink: (Output) throws -> Void) throws {
        switch event {
        case .format(let format):
            try sink(.format(format))
        case .packet(let packet):
            try sink(.frame(packet))
            let reader = try self.reader ?? makeReader()
            let pcm = try reader.read(packet)
            if !pcm.isEmpty { try sink(.pcm(pcm)) }
        }
    }

    private func makeReader() throws -> Reader {
        let made = try Reader(
            commonRate: configuration.commonRate, gapless: configuration.gapless ? parser.gapless : nil,
            fastResampling: configuration.fastResampling)
        reader = made
        if !nextPass { readersMade += 1 }
        nextPass = false
        return made
    }

    /// A looping file's pass ended (its last byte was fed): the Parser's last frame and the Reader's tail —
    /// the padding its LAME tag announced trimmed when `gapless` — are handed on, and the next pass is decoded by a
    /// Reader of its own, whose start is trimmed of the encoder delay again: the seam has no hole.
    public func endPass(_ sink: (Output) throws -> Void) throws {
        guard codec == .mpeg else { return }
        try parser.finish { try handle($0, sink) }
        guard let reader else { return }
        let tail = try reader.finish()
        earlierPasses.packets += reader.statistics.packets
        earlierPasses.errors += reader.statistics.decodeErrors
        self.reader = nil
        nextPass = true
        if !tail.isEmpty { try sink(.pcm(tail)) }
    }
}

@available(*, unavailable) extension InputDecoder: Sendable {}
