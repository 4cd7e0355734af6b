import RadioRelaySystem

/// A frame of digital silence in a given MPEG audio format: the format's header (without CRC or padding) and a body
/// of zeros. Zero side information and no main data decode to silence in every layer: Layer III's granules have no
/// bits (`part2_3_length` 0) and no bit-reservoir offset, Layers I and II allocate no bits to any subband. The bitrate
/// is the model frame's, so a constant-bitrate stream stays constant through an outage.
public struct MP3SilentFrame: Sendable, Equatable {
    public let bytes: [UInt8]
    public let header: MP3FrameHeader
    public var seconds: Double { Double(header.samplesPerFrame) / Double(header.sampleRate) }

    /// The longest frame there is: MPEG-2.5 Layer III, 576 samples at 8 kHz.
    public static let longestFrameSeconds = 0.072

    /// MPEG-1 Layer III, 44.1 kHz, joint stereo, 128 kb/s: what silence sounds like before the upstream said more
    /// (never nil: a test holds it to that).
    public static let standard = MP3SilentFrame(like: [0xFF, 0xFB, 0x90, 0x44])

    /// Silence in the format of `frame` (its first four bytes are a frame header); nil if they are not one.
    public init?(like frame: [UInt8]) {
        guard frame.count >= 4 else { return nil }
        self.init(header: Array(frame[0..<4]))
    }

    private init?(header raw: [UInt8]) {
        // Protection bit set (no CRC), padding cleared; version, layer, bitrate, rate, mode and flags kept.
        let b1 = raw[1] | 0x01
        let b2 = raw[2] & ~0x02
        guard let header = MP3FrameHeader(raw[0], b1, b2, raw[3]), header.frameLength >= 4 else { return nil }
        var bytes = [UInt8](repeating: 0, count: header.frameLength)
        bytes[0] = raw[0]
        bytes[1] = b1
        bytes[2] = b2
        bytes[3] = raw[3]
        self.bytes = bytes
        self.header = header
    }
}
