import RadioRelaySystem

/// Reader: MP3 packets → `PCMBuffer`s in the common format (Float32, stereo, non-interleaved, at `commonRate`).
///
/// libmpg123 decodes (feed mode, float output); libsoxr resamples only when the packet rate differs from the common
/// rate; mono is copied to both channels. A change of rate or channels mid-stream drains the old resampler and starts
/// a new one, so nothing is lost and no stale filter state leaks into the new signal.
///
/// When the Parser found a LAME tag, `gapless` trims the encoder delay (plus mpg123's 529-sample decoder delay)
/// from the start and the padding from the end, as ffmpeg and mpg123 do for files; live streams leave it nil.
public final class Reader {
    public struct Statistics: Equatable, Sendable {
        public var packets = 0
        /// Frames mpg123 could not decode (corrupt data); each costs at most one frame of audio.
        public var decodeErrors = 0
        /// Decoder restarts after gaps in the packet stream.
        public var restarts = 0
        /// Samples per channel at the common rate handed out.
        public var framesOut = 0
    }

    public static let supportedCommonRates = [48_000, 44_100]
    /// mpg123's synthesis delay: decoded sample n is encoder input sample n − 529 − encoder delay.
    package static let decoderDelay = 529

    public let commonRate: Int
    public private(set) var statistics = Statistics()
    /// The decoded stream's own rate and channel count (from mpg123), once known.
    public private(set) var sourceRate: Int?
    public private(set) var sourceChannels: Int?

    private let decoder: MPG123Decoder
    private var resampler: Resampler?
    private var trimStart = 0
    /// Decoded samples (per channel, source rate) after which the rest is padding; nil when unknown.
    private var trimEndAt: Int?
    private var decodedSamples = 0
    private var pending = PCMBuffer(sampleRate: 0)

    /// Resampling with libsoxr's low quality (`Resampler.Quality.low`: half a millisecond held instead of about
    /// twelve): low-latency mode.
    public let fastResampling: Bool

    public init(commonRate: Int = OpusClock.rate, gapless: GaplessInfo? = nil, fastResampling: Bool = false) throws {
        guard Self.supportedCommonRates.contains(commonRate) else {
            throw ConfigurationError("common rate \(commonRate) Hz is not supported; use 48000 or 44100")
        }
        self.commonRate = commonRate
        self.fastResampling = fastResampling
        self.decoder = try MPG123Decoder()
        self.pending = PCMBuffer(sampleRate: commonRate)
        if let gapless { setGapless(gapless) }
    }

    /// Applies a LAME tag's delay and padding to the samples decoded from now on (call before the first packet).
    public func setGapless(_ info: GaplessInfo) {
        trimStart = info.encoderDelay + Self.decoderDelay
        if let frames = info.frameCount, frames > 0 {
            // Samples per frame are not known yet; resolved at the first format (see `configure`).
            trimEndFrames = frames
            trimEndPadding = info.padding
        }
    }

    private var trimEndFrames: Int?
    private var trimEndPadding = 0

    /// Decodes one packet; returns what it produced at the common rate (possibly nothing: mpg123 may need the next
    /// frame first, and the resampler holds a few ms back).
    public func read(_ packet: AudioPacket) throws -> PCMBuffer {
        statistics.packets += 1
        if trimEndFrames != nil, trimEndAt == nil {
            trimEndAt = trimEndFrames! * packet.header.samplesPerFrame - trimEndPadding + Self.decoderDelay
        }
        if packet.followsGap {
            try drainDecoder()
            try decoder.restart()
            statistics.restarts += 1
        }
        try packet.bytes.withUnsafeBytes { try decoder.feed($0) }
        try drainDecoder()
        return takePending()
    }

    /// Ends the stream: drains the resampler's delay.
    public func finish() throws -> PCMBuffer {
        try drainDecoder()
        try flushResampler()
        return takePending()
    }

    private func takePending() -> PCMBuffer {
        let out = pending
        pending = PCMBuffer(sampleRate: commonRate)
        pending.left.reserveCapacity(out.left.capacity)
        pending.right.reserveCapacity(out.right.capacity)
        statistics.framesOut += out.frameCount
        return out
    }

    private func drainDecoder() throws {
        while true {
            switch decoder.next() {
            case .needMore:
                return
            case .newFormat(let rate, let channels):
                try configure(rate: rate, channels: channels)
            case .error:
                statistics.decodeErrors += 1
            case .audio(let samples):
                guard let channels = sourceChannels, !samples.isEmpty else { continue }
                try append(samples, channels: channels)
            }
        }
    }

    private func configure(rate: Int, channels: Int) throws {
        if rate == sourceRate && channels == sourceChannels { return }
        try flushResampler()
        if sourceRate != nil {
            // A new format mid-stream: the LAME tag described the old one.
            trimEndAt = nil
            trimEndFrames = nil
        }
        sourceRate = rate
        sourceChannels = channels
        resampler =
            rate == commonRate
            ? nil
            : try Resampler(
                inputRate: rate, outputRate: commonRate, channels: channels, interleavedInput: true,
                quality: fastResampling ? .low : .high)
    }

    private func flushResampler() throws {
        guard let resampler else { return }
        appendSplit(try resampler.flush())
    }

    /// Applies gapless trimming (in source samples), then resampling or a plain de-interleave.
    private func append(_ interleaved: UnsafeBufferPointer<Float>, channels: Int) throws {
        var frames = interleaved.count / channels
        var first = 0
        if decodedSamples < trimStart {
            first = min(frames, trimStart - decodedSamples)
        }
        if let end = trimEndAt {
            frames = max(first, min(frames, end - decodedSamples))
        }
        decodedSamples += interleaved.count / channels
        let count = frames - first
        guard count > 0 else { return }
        let start = interleaved.baseAddress! + first * channels
        if let resampler {
            appendSplit(try resampler.process(interleaved: start, frames: count))
            return
        }
        // Mono is copied to both channels; stereo is de-interleaved.
        let step = channels
        let left = [Float](unsafeUninitializedCapacity: count) { out, initialized in
            for i in 0..<count { out[i] = start[step * i] }
            initialized = count
        }
        let right =
            channels == 1
            ? left
            : [Float](unsafeUninitializedCapacity: count) { out, initialized in
                for i in 0..<count { out[i] = start[step * i + 1] }
                initialized = count
            }
        pending.left.append(contentsOf: left)
        pending.right.append(contentsOf: right)
    }

    private func appendSplit(_ channels: [[Float]]) {
        guard let first = channels.first, !first.isEmpty else { return }
        pending.left.append(contentsOf: first)
        pending.right.append(contentsOf: channels.count > 1 ? channels[1] : first)
    }
}

@available(*, unavailable) extension Reader: Sendable {}
