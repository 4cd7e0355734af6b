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
    /// Audio is flushed onto a page every `pageDuration` ms (a multiple of 20 ms): the latency floor for listeners.
    public var pageDuration = 100
    /// The rate of the common-format buffers the Encoder receives; resampled to 48 kHz when different.
    public var inputRate = OpusClock.rate
    /// The upstream's own rate, announced in OpusHead (informational for players).
    public var originalRate = OpusClock.rate
    public var serial: UInt32 = .random(in: 1...UInt32.max)
    /// User comments for OpusTags, `KEY=value`.
    public var comments: [String] = []

    public init() {}

    public func validate() throws {
        guard (6_000...510_000).contains(bitrate) else {
            throw ConfigurationError("bitrate \(bitrate) b/s is out of range: use 6k to 510k")
        }
        guard channels == 1 || channels == 2 else {
            throw ConfigurationError("channels \(channels): use 1 (mono) or 2 (stereo)")
        }
        guard (0...10).contains(complexity) else {
            throw ConfigurationError("complexity \(complexity) is out of range: use 0 to 10")
        }
        guard pageDuration >= 20, pageDuration <= 1000, pageDuration % 20 == 0 else {
            throw ConfigurationError("page duration \(pageDuration) ms must be a multiple of 20 ms from 20 to 1000")
        }
        guard Reader.supportedCommonRates.contains(inputRate) else {
            throw ConfigurationError("encoder input rate \(inputRate) Hz is not supported; use 48000 or 44100")
        }
    }
}

/// Encoder: common-format buffers → Ogg Opus pages (RFC 7845).
///
/// Two header pages come first (OpusHead with the encoder's lookahead as pre-skip, OpusTags), available on their own
/// as `headerPages` for listeners who join later. Audio is cut into 20 ms Opus frames and a page is flushed every
/// `pageDuration`. A page's granule position counts the 48 kHz samples decodable from all packets completed on it,
/// pre-skip included; `finish()` pads the last frame and sets the final granule to pre-skip + input samples exactly,
/// so the decoded length equals the input's (end trimming, RFC 7845 §4.4).
public final class Encoder {
    public let configuration: EncoderConfiguration
    public let headerPages: [OggPage]
    /// Pre-skip in 48 kHz samples.
    public let preSkip: Int
    /// Input samples (per channel, at 48 kHz) taken so far.
    public private(set) var samplesIn: Int64 = 0
    public private(set) var packetsOut: Int64 = 0
    public private(set) var bytesOut: Int64 = 0
    public private(set) var isFinished = false

    private let opus: OpusEncoderHandle
    private let ogg: OggStream
    private let resampler: Resampler?
    private let packetsPerPage: Int
    private var packetsInPage = 0
    private let frame: UnsafeMutablePointer<Float>
    private var frameFill = 0
    private let packet: UnsafeMutablePointer<UInt8>
    private var pages: [OggPage] = []

    public static var vendor: String { "radio-relay \(RadioRelayVersion.string) (\(OpusEncoderHandle.libraryVersion))" }

    public init(_ configuration: EncoderConfiguration) throws {
        try configuration.validate()
        self.configuration = configuration
        opus = try OpusEncoderHandle(
            channels: configuration.channels, bitrate: configuration.bitrate, complexity: configuration.complexity,
            constrainedVBR: configuration.constrainedVBR)
        ogg = try OggStream(serial: configuration.serial)
        resampler =
            configuration.inputRate == OpusClock.rate
            ? nil
            : try Resampler(
                inputRate: configuration.inputRate, outputRate: OpusClock.rate, channels: 2,
                interleavedInput: false)
        preSkip = opus.lookahead
        packetsPerPage = configuration.pageDuration / 20
        frame = .allocate(capacity: OpusEncoderHandle.frameSize * configuration.channels)
        packet = .allocate(capacity: OpusEncoderHandle.maxPacket)

        ogg.append(
            Self.opusHead(
                preSkip: preSkip, originalRate: configuration.originalRate, channels: configuration.channels),
            granule: 0,
            beginning: true)
        var headers = ogg.flush()
        ogg.append(Self.opusTags(vendor: Self.vendor, comments: configuration.comments), granule: 0)
        headers += ogg.flush()
        headerPages = headers
    }

    deinit {
        frame.deallocate()
        packet.deallocate()
    }

    /// Encodes a common-format buffer; returns the pages completed by it (often none: a page waits for its last
    /// packet).
    public func encode(_ buffer: PCMBuffer) throws -> [OggPage] {
        precondition(!isFinished, "encode after finish")
        precondition(buffer.sampleRate == configuration.inputRate, "buffer rate differs from the encoder input rate")
        if let resampler {
            let out = try resampler.process(left: buffer.left, right: buffer.right)
            try take(out[0], out[1])
        } else {
            try take(buffer.left, buffer.right)
        }
        return takePages()
    }

    /// Encodes `frames` samples of silence at the input rate (keeps the stream going while the upstream is away).
    public func encodeSilence(frames: Int) throws -> [OggPage] {
        try encode(.silence(frames: frames, sampleRate: configuration.inputRate))
    }

    /// Ends the stream: drains the resampler, pads the last frame with silence and writes the final page with the
    /// exact end granule and the end-of-stream flag.
    public func finish() throws -> [OggPage] {
        precondition(!isFinished, "finish twice")
        if let resampler {
            let tail = try resampler.flush()
            try take(tail[0], tail[1])
        }
        let total = Int64(preSkip) + samplesIn
        let frameSize = Int64(OpusEncoderHandle.frameSize)
        let packetsNeeded = (total + frameSize - 1) / frameSize
        while packetsOut < packetsNeeded {
            let channels = configuration.channels
            for i in frameFill * channels..<OpusEncoderHandle.frameSize * channels { frame[i] = 0 }
            frameFill = OpusEncoderHandle.frameSize
            let last = packetsOut + 1 == packetsNeeded
            try encodeFrame(granule: last ? total : nil, end: last)
        }
        pages += ogg.flush()
        isFinished = true
        return takePages()
    }

    private func take(_ left: [Float], _ right: [Float]) throws {
        samplesIn += Int64(left.count)
        var index = 0
        let count = left.count
        while index < count {
            let n = min(count - index, OpusEncoderHandle.frameSize - frameFill)
            if configuration.channels == 1 {
                for i in index..<index + n { frame[frameFill + i - index] = (left[i] + right[i]) * 0.5 }
            } else {
                var o = frameFill * 2
                for i in index..<index + n {
                    frame[o] = left[i]
                    frame[o + 1] = right[i]
                    o += 2
                }
            }
            frameFill += n
            index += n
            if frameFill == OpusEncoderHandle.frameSize { try encodeFrame(granule: nil, end: false) }
        }
    }

    private func encodeFrame(granule: Int64?, end: Bool) throws {
        let length = try opus.encode(frame, into: packet)
        frameFill = 0
        packetsOut += 1
        let position = granule ?? packetsOut * Int64(OpusEncoderHandle.frameSize)
        ogg.append(UnsafeRawBufferPointer(start: packet, count: length), granule: position, end: end)
        packetsInPage += 1
        if packetsInPage >= packetsPerPage {
            pages += ogg.flush()
            packetsInPage = 0
        }
    }

    private func takePages() -> [OggPage] {
        guard !pages.isEmpty else { return [] }
        let out = pages
        pages.removeAll(keepingCapacity: true)
        for page in out { bytesOut += Int64(page.bytes.count) }
        return out
    }

    /// RFC 7845 §5.1: magic, version 1, channel count, pre-skip, input rate, output gain 0, mapping family 0.
    static func opusHead(preSkip: Int, originalRate: Int, channels: Int = 2) -> [UInt8] {
        var b = Array("OpusHead".utf8)
        b.append(1)
        b.append(channels == 1 ? 1 : 2)
        b.appendLittleEndian(UInt16(preSkip))
        b.appendLittleEndian(UInt32(originalRate))
        b.appendLittleEndian(UInt16(0))
        b.append(0)
        return b
    }

    /// RFC 7845 §5.2: magic, vendor string, user comments.
    static func opusTags(vendor: String, comments: [String]) -> [UInt8] {
        var b = Array("OpusTags".utf8)
        let vendorBytes = Array(vendor.utf8)
        b.appendLittleEndian(UInt32(vendorBytes.count))
        b += vendorBytes
        b.appendLittleEndian(UInt32(comments.count))
        for comment in comments {
            let bytes = Array(comment.utf8)
            b.appendLittleEndian(UInt32(bytes.count))
            b += bytes
        }
        return b
    }
}

@available(*, unavailable) extension Encoder: Sendable {}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
