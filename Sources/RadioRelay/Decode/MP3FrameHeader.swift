/// The 4-byte header that starts every MPEG audio frame (ISO 11172-3 §2.4.1.3, ISO 13818-3 for MPEG-2/2.5).
///
/// Parsing is a pure function of four bytes, so the Parser's sync logic and the fuzz target can trust it with anything.
public struct MP3FrameHeader: Equatable, Sendable {
    public enum Version: Int, Sendable {
        case mpeg1 = 1
        case mpeg2 = 2
        case mpeg25 = 25
    }

    public let version: Version
    /// 1, 2 or 3.
    public let layer: Int
    public let hasCRC: Bool
    /// Bits per second of this frame (VBR streams change it frame by frame).
    public let bitrate: Int
    public let sampleRate: Int
    public let padding: Bool
    /// 3 = single channel; 0 stereo, 1 joint stereo, 2 dual channel.
    public let channelMode: Int

    public var channels: Int { channelMode == 3 ? 1 : 2 }

    /// PCM samples per channel that one frame decodes to.
    public var samplesPerFrame: Int {
        switch layer {
        case 1: return 384
        case 2: return 1152
        default: return version == .mpeg1 ? 1152 : 576
        }
    }

    /// Whole frame length in bytes, header included.
    public var frameLength: Int {
        switch layer {
        case 1: return (12 * bitrate / sampleRate + (padding ? 1 : 0)) * 4
        case 2: return 144 * bitrate / sampleRate + (padding ? 1 : 0)
        default:
            let factor = version == .mpeg1 ? 144 : 72
            return factor * bitrate / sampleRate + (padding ? 1 : 0)
        }
    }

    /// Bytes of Layer III side information after the header (and CRC): where a Xing/Info tag would start.
    public var sideInfoLength: Int {
        if version == .mpeg1 { return channels == 1 ? 17 : 32 }
        return channels == 1 ? 9 : 17
    }

    /// Fields that must stay the same from frame to frame of one stream; a change means a new format or a false sync.
    public func isCompatible(with other: MP3FrameHeader) -> Bool {
        version == other.version && layer == other.layer && sampleRate == other.sampleRate
    }

    private static let bitrates: [[Int]] = [
        // MPEG-1 layer I, II, III
        [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
        [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
        // MPEG-2/2.5 layer I, then II and III
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    ]
    private static let sampleRates = [44100, 48000, 32000]

    /// Parses four header bytes; nil for anything that is not a usable frame header: a missing sync word, reserved
    /// version/layer/rate/emphasis, or the "free" and "bad" bitrate indices (free format cannot be sized from the
    /// header alone, so it is treated as garbage).
    public init?(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        guard b0 == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
        let versionBits = (b1 >> 3) & 3
        let layerBits = (b1 >> 1) & 3
        let bitrateIndex = Int(b2 >> 4)
        let rateIndex = Int((b2 >> 2) & 3)
        guard versionBits != 1, layerBits != 0, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3,
            b3 & 3 != 2
        else { return nil }
        let version: Version = versionBits == 3 ? .mpeg1 : (versionBits == 2 ? .mpeg2 : .mpeg25)
        let layer = 4 - Int(layerBits)
        let table: Int
        if version == .mpeg1 { table = layer - 1 } else { table = layer == 1 ? 3 : 4 }
        let divisor = version == .mpeg1 ? 1 : (version == .mpeg2 ? 2 : 4)
        self.version = version
        self.layer = layer
        self.hasCRC = b1 & 1 == 0
        self.bitrate = Self.bitrates[table][bitrateIndex] * 1000
        self.sampleRate = Self.sampleRates[rateIndex] / divisor
        self.padding = (b2 >> 1) & 1 == 1
        self.channelMode = Int(b3 >> 6)
    }
}
