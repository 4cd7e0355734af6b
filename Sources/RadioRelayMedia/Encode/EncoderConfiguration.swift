import RadioRelaySystem

/// Settings of the Encoder stage, checked before use.
public struct EncoderConfiguration: Sendable, Equatable {
    /// Target bits per second (6 000 – 510 000).
    public var bitrate = 96_000
    /// 2: stereo; 1: mono, the common format's two channels mixed down as (L + R) / 2 (OpusHead says 1 channel).
    public var channels = 2
    /// libopus complexity, 0 (fastest) – 10 (best, the library's default).
    public var complexity = 10
    /// Constrained VBR keeps pure tones near the target; unconstrained VBR spends about twice as much on them.
    public var constrainedVBR = true
    /// Audio is flushed onto a page every `pageDuration` ms (10, or a multiple of 20 ms): the latency floor for
    /// listeners. Opus frames are 20 ms, or 10 ms on 10 ms pages.
    public var pageDuration = 100
    /// libopus's restricted low-delay application (`OPUS_APPLICATION_RESTRICTED_LOWDELAY`: 2.5 ms of look-ahead
    /// instead of 6.5, CELT only) instead of `OPUS_APPLICATION_AUDIO`: low-latency mode.
    public var lowDelay = false
    /// The rate of the common-format buffers the Encoder receives; resampled to 48 kHz when different.
    public var inputRate = OpusClock.rate
    /// The upstream's own rate, announced in OpusHead (informational for players).
    public var originalRate = OpusClock.rate
    public var serial: UInt32 = .random(in: 1...UInt32.max)
    /// User comments for OpusTags, `KEY=value`.
    public var comments: [String] = []

    public init() {}

    /// The bitrates libopus takes, b/s.
    public static let bitrateRange = 6_000...510_000
    public static let channelsRange = 1...2
    public static let complexityRange = 0...10
    /// Page durations, ms: 10 (one 10 ms frame), or a multiple of 20 (one Opus frame) in this range.
    public static let pageDurationRange = 20...1000
    public static let shortPage = 10

    /// Opus frames, ms: 20, or 10 on 10 ms pages.
    public var frameDuration: Int { pageDuration == Self.shortPage ? Self.shortPage : 20 }

    public func validate() throws {
        guard Self.bitrateRange.contains(bitrate) else {
            throw ConfigurationError("bitrate \(bitrate) b/s is out of range: use 6k to 510k")
        }
        guard Self.channelsRange.contains(channels) else {
            throw ConfigurationError("channels \(channels): use 1 (mono) or 2 (stereo)")
        }
        guard Self.complexityRange.contains(complexity) else {
            throw ConfigurationError("complexity \(complexity) is out of range: use 0 to 10")
        }
        guard
            pageDuration == Self.shortPage || (Self.pageDurationRange.contains(pageDuration) && pageDuration % 20 == 0)
        else {
            throw ConfigurationError(
                "page duration \(pageDuration) ms must be 10, or a multiple of 20 ms from 20 to 1000")
        }
        guard Reader.supportedCommonRates.contains(inputRate) else {
            throw ConfigurationError("encoder input rate \(inputRate) Hz is not supported; use 48000 or 44100")
        }
    }

    /// Whether an encoder set up with `other` makes the same Ogg stream as one set up with this: everything but the
    /// bitrate, complexity and constrained VBR (which a running encoder takes, `Encoder.retune`) is the same.
    public func sameStream(as other: EncoderConfiguration) -> Bool {
        var tuned = other
        tuned.bitrate = bitrate
        tuned.complexity = complexity
        tuned.constrainedVBR = constrainedVBR
        return tuned == self
    }
}
