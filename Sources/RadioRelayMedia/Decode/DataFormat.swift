import RadioRelaySystem

/// What the Parser learned about the compressed stream: reported for the first frame and on every change.
public struct DataFormat: Equatable, Sendable, CustomStringConvertible {
    /// What the stream is coded in: MPEG audio (an upstream, a source) or Opus (a live source's Ogg Opus).
    public enum Codec: String, Sendable, Equatable {
        case mpeg
        case opus
    }

    public var codec = Codec.mpeg
    public var sampleRate: Int
    public var channels: Int
    /// Bits per second of the frame that established (or changed) the format. A VBR stream changes bitrate on every
    /// frame; that alone is not a format change.
    public var bitrate: Int
    public var layer: Int
    public var samplesPerFrame: Int

    public init(sampleRate: Int, channels: Int, bitrate: Int, layer: Int, samplesPerFrame: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitrate = bitrate
        self.layer = layer
        self.samplesPerFrame = samplesPerFrame
    }

    package init(_ header: MP3FrameHeader) {
        self.init(
            sampleRate: header.sampleRate, channels: header.channels, bitrate: header.bitrate,
            layer: header.layer, samplesPerFrame: header.samplesPerFrame)
    }

    /// Same decoded shape: rate, channels, layer. Bitrate is informational.
    public func hasSameShape(as other: DataFormat) -> Bool {
        codec == other.codec && sampleRate == other.sampleRate && channels == other.channels && layer == other.layer
    }

    /// An Ogg Opus source's: decoded at 48 kHz, `channels` as its OpusHead says (bitrate unknown: 0).
    public static func opus(channels: Int) -> DataFormat {
        var format = DataFormat(sampleRate: 48_000, channels: channels, bitrate: 0, layer: 0, samplesPerFrame: 960)
        format.codec = .opus
        return format
    }

    public var description: String {
        if codec == .opus { return "Ogg Opus, 48000 Hz, \(channels == 1 ? "mono" : "stereo")" }
        return "MPEG layer \(layer), \(sampleRate) Hz, \(channels == 1 ? "mono" : "stereo"), \(bitrate / 1000) kb/s"
    }
}

/// One compressed frame, handed on by the Parser and owned by whoever receives it.
public struct AudioPacket: Sendable {
    public var bytes: [UInt8]
    public var header: MP3FrameHeader
    /// Bytes were dropped just before this frame (garbage, a damaged frame, a reconnect): the previous frames'
    /// bit reservoir, which Layer III frames borrow from, does not lead into it.
    public var followsGap = false

    public init(bytes: [UInt8], header: MP3FrameHeader, followsGap: Bool = false) {
        self.bytes = bytes
        self.header = header
        self.followsGap = followsGap
    }

    /// Samples per channel at the packet's own rate.
    public var sampleCount: Int { header.samplesPerFrame }
    public var duration: Double { Double(header.samplesPerFrame) / Double(header.sampleRate) }
}

/// Encoder delay and padding from a LAME tag: how many decoded samples at each end are not part of the signal.
public struct GaplessInfo: Equatable, Sendable {
    /// Samples the encoder added at the start (the decoder adds 529 more).
    public var encoderDelay: Int
    /// Samples of padding at the end.
    public var padding: Int
    /// Audio frames in the file according to the Xing tag, when present.
    public var frameCount: Int?
}
