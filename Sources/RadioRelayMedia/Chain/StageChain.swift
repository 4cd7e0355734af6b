import RadioRelaySystem

/// The stage chain: ICY demux → Parser → Reader → Encoder, bytes in, Ogg pages out.
///
/// One value used by both the live station (`Pipeline`) and `transcode` (`Transcoder`). Every method is synchronous
/// and throws what a stage threw; nothing is stashed for later. The two paths differ only in configuration (frame
/// confirmation, gapless trimming, when the Encoder is made) and in what surrounds the chain: end of stream offline;
/// pacing, silence fill and reconnects live.
///
/// The Reader is made at the first packet (so it can take the LAME tag the Parser found before it); the Encoders are
/// either given (live: their header pages must exist before any audio) or one is made at the first format (offline:
/// OpusHead then names the upstream's own rate). Live, a station gives one Encoder per output (its renditions): the
/// upstream is parsed and decoded once, and every buffer the stream clock releases, silence included, goes to each
/// Encoder in turn; their pages are collected per output (`takePagesPerOutput`).
public final class StageChain {
    public struct Configuration: Sendable {
        public var encoder = EncoderConfiguration()
        /// The common rate of the Reader's buffers (48 000 or 44 100 Hz).
        public var commonRate = OpusClock.rate
        /// See `Parser.init(confirmsFrames:)`: true for files, false for live relaying (one frame sooner).
        public var confirmsFrames = true
        /// Trim the encoder delay and padding a LAME tag announces (files; a live stream has no meaningful end).
        public var gapless = true
        /// Decoded audio waits in a queue until `release` hands it to the Encoder (live: the stream clock decides
        /// how much, when); otherwise it is encoded at once (transcode).
        public var holdsDecodedAudio = false
        /// The longest ID3v2 tag the Parser skips (see `Parser.init(confirmsFrames:maxTagLength:)`).
        public var maxTagLength = Int.max

        public init() {}
    }

    /// What one call produced besides pages.
    public enum Event: Equatable, Sendable {
        /// The upstream's format: the first, and every change.
        case format(DataFormat)
        /// A complete ICY metadata block's fields (`StreamTitle`, …).
        case metadata([String: String])
    }

    public let configuration: Configuration
    /// ICY demux → Parser → Reader, for what `feed` is given (a live station decodes each input with one of its own
    /// and hands the outputs to `accept`).
    public let decoder: InputDecoder
    public var parser: Parser { decoder.parser }
    public var reader: Reader? { decoder.reader }
    /// One per output, in order (the first is the main output).
    public private(set) var encoders: [Encoder]
    /// The first output's Encoder (the only one offline).
    public var encoder: Encoder? { encoders.first }
    /// Readers made over the chain's life: 1 once audio flowed, however many outputs (the proof that a station
    /// decodes once).
    public var readersMade: Int { decoder.readersMade }
    /// Decoded audio not yet encoded (only with `holdsDecodedAudio`). Internal, not private: a switch of input
    /// (`StageChain+Switch.swift`) works on it.
    var queue: PCMQueue
    /// The true-peak limiter every Encoder's audio passes first (`true_peak`, live; `StageChain+Limiter.swift`).
    package var limiter: TruePeakLimiter?
    /// The upstream's own frames for an MP3 pass-through output, released in step with `queue` (live only).
    public var passThrough: MP3PassThrough?
    /// The input that plays yields MP3 frames for the pass-through (false: an Ogg Opus live source, for which the
    /// pass-through makes silent frames, as during an outage).
    public var inputHasFrames = true
    /// Frames may wait this much longer than the decoded audio beside them (the decoder's delay, a damaged frame).
    static let passThroughSlack = 0.5
    /// Pages completed since the last `take`, in order, per Encoder.
    private var pages: [[OggPage]]
    private var events: [Event] = []
    /// The title of the newest link asked for (`chainsTitles`), so that a repeated title starts none.
    private var linkTitle: String?

    /// Each new ICY title starts a chained Ogg link (`Encoder.startLink`) where its metadata block sat in the audio:
    /// a mark in the queue of decoded audio, reached when `release` encodes the audio that followed the block (at
    /// once when the audio is not held). Off, metadata never touches the Ogg stream. Turning it off forgets the
    /// titles still waiting.
    public var chainsTitles = false {
        didSet {
            guard !chainsTitles else { return }
            queue.removeMarks()
            linkTitle = nil
        }
    }

    public convenience init(_ configuration: Configuration, encoder: Encoder? = nil) {
        self.init(configuration, encoders: encoder.map { [$0] } ?? [])
    }

    /// - Parameter encoders: one per output, all at the common rate; empty: one is made at the first format.
    public init(_ configuration: Configuration, encoders: [Encoder]) {
        self.configuration = configuration
        var decoding = InputDecoder.Configuration()
        decoding.commonRate = configuration.commonRate
        decoding.confirmsFrames = configuration.confirmsFrames
        decoding.gapless = configuration.gapless
        decoding.maxTagLength = configuration.maxTagLength
        self.decoder = InputDecoder(decoding)
        self.encoders = encoders
        self.pages = Array(repeating: [], count: max(1, encoders.count))
        self.queue = PCMQueue(sampleRate: configuration.commonRate)
    }

    /// Seconds of decoded audio waiting for `release`.
    public var queuedSeconds: Double { Double(queue.readyCount) / Double(configuration.commonRate) }

    /// Seconds of decoded audio held, released or not yet releasable (during a crossfade the new input's audio may
    /// run ahead of what may be released): what reading more would add to.
    public var heldSeconds: Double { queue.seconds }

    /// Drops the oldest `seconds` of waiting audio (crossfaded into what follows).
    public func drop(seconds: Double) {
        let before = queue.frameCount
        queue.drop(frames: PCMBuffer.frames(seconds, rate: configuration.commonRate))
        passThrough?.drop(seconds: Double(before - queue.frameCount) / Double(configuration.commonRate))
    }

    /// Encodes the oldest `seconds` of waiting audio; `nudge` > 0 leaves that fraction of samples out, < 0 repeats
    /// as many (a rate correction for an upstream whose clock drifts).
    public func release(seconds: Double, nudge: Double = 0) throws {
        let frames = PCMBuffer.frames(seconds, rate: configuration.commonRate)
        guard frames > 0, !encoders.isEmpty else { return }
        // Taken up to each title mark in turn, so that its link starts at the mark (one pass without marks); every
        // output starts its link at the same place.
        var remaining = min(frames, queue.readyCount)
        if let passThrough, !inputHasFrames {
            // An input without MP3 frames plays (an Ogg Opus source): the pass-through sounds silent meanwhile.
            passThrough.trim(toSeconds: 0)
            passThrough.silence(seconds: Double(remaining) / Double(configuration.commonRate))
        } else if let passThrough {
            passThrough.release(seconds: Double(remaining) / Double(configuration.commonRate))
            passThrough.trim(
                toSeconds: queue.seconds - Double(remaining) / Double(configuration.commonRate) + Self.passThroughSlack)
        }
        while remaining > 0 {
            if let title = queue.takeReachedMark() {
                for encoder in encoders { try encoder.startLink(title: title) }
            }
            let n = queue.framesBeforeMark(limit: remaining)
            remaining -= n
            let buffer = queue.take(frames: n, nudge: nudge)
            if !buffer.isEmpty { try encode(buffer) }
        }
    }

    /// One buffer to every Encoder, each output's pages kept apart.
    private func encode(_ buffer: PCMBuffer) throws {
        let limited = self.limited(buffer)
        try eachEncoder { try $0.encode(limited) }
    }

    /// Runs `step` on every Encoder, collecting each one's pages. One that throws does not keep the others from
    /// their audio (their streams stay in step); the first error is thrown after all have run.
    private func eachEncoder(_ step: (Encoder) throws -> [OggPage]) throws {
        var failure: (any Error)?
        for index in encoders.indices {
            do {
                pages[index] += try step(encoders[index])
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }

    /// Samples (per channel, 48 kHz) the first Encoder has taken (all take the same): the stream's clock.
    public var samplesEncoded: Int64 { encoder?.samplesIn ?? 0 }
    public var secondsEncoded: Double { OpusClock.seconds(samplesEncoded) }

    /// A new connection to the upstream: forgets sync and the carry-over; `metaInterval` is its `icy-metaint`.
    public func restart(metaInterval: Int?) {
        decoder.restart(metaInterval: metaInterval)
    }

    /// Feeds upstream bytes (ICY-framed when the connection announced a metadata interval).
    public func feed(_ bytes: UnsafeRawBufferPointer) throws {
        try decoder.feed(bytes) { try accept($0) }
    }

    /// Feeds MP3 bytes to the Parser and each packet through the Reader and the Encoder.
    public func feedAudio(_ bytes: UnsafeRawBufferPointer) throws {
        try decoder.feedAudio(bytes) { try accept($0) }
    }

    /// The longest fade-out of an input whose audio ran out, in seconds.
    public static let underrunFade = 0.05

    /// Encodes `frames` samples of silence at the common rate (an outage, live).
    public func encodeSilence(frames: Int) throws {
        guard frames > 0 else { return }
        passThrough?.silence(seconds: Double(frames) / Double(configuration.commonRate))
        // A cut whose crossfade had nothing to go into ends in its own fade-out, part of the silence; so does an
        // input whose audio ran out (it hangs, or is late): continued and faded out over the silence's first frames
        // (5 ms at least), the next audio fading in.
        var silent = frames
        let fade = PCMBuffer.frames(Self.underrunFade, rate: configuration.commonRate)
        if let tail = queue.takeSpliceTail()
            ?? queue.takeUnderrunTail(frames: min(max(frames, PCMQueue.crossfade), fade), fadeIn: PCMQueue.crossfade),
            !tail.isEmpty
        {
            try encode(tail)
            silent -= tail.frameCount
        }
        guard silent > 0 else { return }
        if let flushed = flushLimiter(frames: silent) {
            try encode(flushed)
            silent -= flushed.frameCount
        }
        guard silent > 0 else { return }
        limiter?.passSilence(frames: silent)
        try eachEncoder { try $0.encodeSilence(frames: silent) }
    }

    /// Ends the stream: the Parser's last frame, the Reader's tail, each Encoder's end-trimmed last page.
    /// Returns false when no audio frame was ever found (the encoder was never made).
    public func finish() throws -> Bool {
        guard try decoder.finish({ try accept($0) }), !encoders.isEmpty else { return false }
        try eachEncoder { try $0.finish() }
        return true
    }

    /// The first output's pages completed so far, handed over once (offline there is only one output).
    public func takePages() -> [OggPage] { take(output: 0) }

    /// The outputs changed (a reload added or removed one): `encoders` in their new order, `from[i]` the index the
    /// i-th had before (nil: a new one, whose stream starts with the next audio); pages not yet handed over stay
    /// with their output.
    public func replaceEncoders(_ encoders: [Encoder], from: [Int?]) {
        guard !encoders.isEmpty, encoders.count == from.count else { return }
        let before = pages
        pages = from.map { index in index.flatMap { before.indices.contains($0) ? before[$0] : nil } ?? [] }
        self.encoders = encoders
    }

    /// Every output's pages completed so far, in the order of `encoders`, handed over once.
    public func takePagesPerOutput() -> [[OggPage]] { pages.indices.map(take(output:)) }

    private func take(output index: Int) -> [OggPage] {
        guard !pages[index].isEmpty else { return [] }
        defer { pages[index].removeAll(keepingCapacity: true) }
        return pages[index]
    }

    /// The events seen so far, handed over once.
    public func takeEvents() -> [Event] {
        guard !events.isEmpty else { return [] }
        defer { events.removeAll() }
        return events
    }

    /// A metadata block: an event, and with `chainsTitles` a new title marked where the block sat.
    private func noteMetadata(_ fields: [String: String]) throws {
        events.append(.metadata(fields))
        guard chainsTitles, let title = Sanitized.title(in: fields), !title.isEmpty, title != linkTitle else { return }
        linkTitle = title
        if configuration.holdsDecodedAudio {
            queue.mark(title)
        } else {
            try encoder?.startLink(title: title)
        }
    }

    /// Takes what a decoder handed on: its own (`feed`), or an input's (a live station with several inputs decodes
    /// each with an `InputDecoder` of its own and hands the chain what the one that plays makes).
    public func accept(_ output: InputDecoder.Output) throws {
        switch output {
        case .format(let format):
            events.append(.format(format))
            if encoders.isEmpty {
                var settings = configuration.encoder
                settings.inputRate = configuration.commonRate
                settings.originalRate = format.sampleRate
                let made = try Encoder(settings)
                pages[0] += made.headerPages
                encoders = [made]
            }
        case .metadata(let fields):
            try noteMetadata(fields)
        case .frame(let packet):
            passThrough?.append(packet)
        case .pcm(let pcm):
            if configuration.holdsDecodedAudio {
                queue.append(pcm)
            } else if !pcm.isEmpty {
                try encode(pcm)
            }
        }
    }
}

@available(*, unavailable) extension StageChain: Sendable {}
