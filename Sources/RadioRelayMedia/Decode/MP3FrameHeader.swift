import RadioRelaySystem

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

// What the first frame of a file may carry instead of audio: a Xing/Info or VBRI tag (an encoder's table of
// contents), whose LAME extension holds the gapless delay and padding.
extension MP3FrameHeader {
    /// Offset of a Xing/Info tag in a Layer III frame: after the header, the CRC and the side information.
    private var xingOffset: Int { 4 + (hasCRC ? 2 : 0) + sideInfoLength }

    /// Whether `frame` (this header's frame) is a Xing, Info or VBRI tag frame rather than audio.
    package func isInfoFrame(_ frame: [UInt8]) -> Bool {
        if Self.matches(frame, at: xingOffset, "Xing") || Self.matches(frame, at: xingOffset, "Info") { return true }
        return Self.matches(frame, at: 4 + 32, "VBRI")
    }

    private static func matches(_ frame: [UInt8], at offset: Int, _ tag: String) -> Bool {
        let tagBytes = Array(tag.utf8)
        guard offset + tagBytes.count <= frame.count else { return false }
        return frame[offset..<offset + tagBytes.count].elementsEqual(tagBytes)
    }

    /// Reads the Xing frame count and the LAME tag's encoder delay and padding (12 bits each, 21 bytes into the tag).
    package func gaplessInfo(_ frame: [UInt8]) -> GaplessInfo? {
        var p = xingOffset
        guard Self.matches(frame, at: p, "Xing") || Self.matches(frame, at: p, "Info"), p + 8 <= frame.count else {
            return nil
        }
        func be32(_ i: Int) -> Int {
            Int(frame[i]) << 24 | Int(frame[i + 1]) << 16 | Int(frame[i + 2]) << 8 | Int(frame[i + 3])
        }
        let flags = be32(p + 4)
        p += 8
        var frames: Int?
        if flags & 1 != 0, p + 4 <= frame.count {
            frames = be32(p)
            p += 4
        }
        if flags & 2 != 0 { p += 4 }
        if flags & 4 != 0 { p += 100 }
        if flags & 8 != 0 { p += 4 }
        guard p + 24 <= frame.count,
            ["LAME", "Lavc", "Lavf", "L3.9", "GOGO"].contains(where: { Self.matches(frame, at: p, $0) })
        else { return frames.map { GaplessInfo(encoderDelay: 0, padding: 0, frameCount: $0) } }
        let d = p + 21
        let delay = Int(frame[d]) << 4 | Int(frame[d + 1]) >> 4
        let padding = Int(frame[d + 1] & 0x0F) << 8 | Int(frame[d + 2])
        return GaplessInfo(encoderDelay: delay, padding: padding, frameCount: frames)
    }
}
