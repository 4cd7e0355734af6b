import RadioRelaySystem

/// Encoder: common-format buffers → Ogg Opus pages (RFC 7845).
///
/// Two header pages come first (OpusHead with the encoder's lookahead as pre-skip, OpusTags), available on their own
/// as `headerPages` for listeners who join later. Audio is cut into 20 ms Opus frames and a page is flushed every
/// `pageDuration`. A page's granule position counts the 48 kHz samples decodable from all packets completed on it,
/// pre-skip included; `finish()` pads the last frame and sets the final granule to pre-skip + input samples exactly,
/// so the decoded length equals the input's (end trimming, RFC 7845 §4.4).
///
/// `startLink(title:)` chains a new logical stream (a new link) at the current input position, as Icecast passes on
/// from Ogg sources whose title changes. The link being written ends with the packet that holds that position,
/// flagged end-of-stream on a flushed page; the new link has a fresh serial, its own OpusHead (BOS page) and an
/// OpusTags page with `TITLE=`, and granules that count from its start. One libopus encoder runs across the
/// boundary, as libopusenc does when it chains: the boundary packet is encoded without inter-frame prediction (a
/// keyframe) and repeated as the new link's first packet, covered by a pre-skip of one frame. A player resets its
/// decoder at a new link; decoding that keyframe primes it, and the packets that follow decode exactly as in one
/// continuous stream, so no sample is lost, repeated or faded at a title change. (A fresh encoder per link would
/// instead need the old link's lookahead flushed with padding and a new pre-skip of primed silence.)
public final class Encoder {
    public private(set) var configuration: EncoderConfiguration
    /// The first link's header pages (later links' go out with the audio pages).
    public private(set) var headerPages: [OggPage] = []
    /// The first link's pre-skip in 48 kHz samples (a later link's is one frame: its repeated keyframe).
    public let preSkip: Int
    /// Input samples (per channel, at 48 kHz) taken so far.
    public private(set) var samplesIn: Int64 = 0
    public private(set) var packetsOut: Int64 = 0
    public private(set) var bytesOut: Int64 = 0
    public private(set) var isFinished = false
    /// Links started after the first (0: one logical stream).
    public private(set) var linksStarted = 0

    private let opus: OpusEncoderHandle
    private var ogg: OggStream
    private let resampler: Resampler?
    private let packetsPerPage: Int
    private var packetsInPage = 0
    private let frame: UnsafeMutablePointer<Float>
    private var frameFill = 0
    private let packet: UnsafeMutablePointer<UInt8>
    private var pages: [OggPage] = []
    /// Packets made before the current link's first packet: the link's granules count from there.
    private var linkOrigin: Int64 = 0
    /// Packets a link has at least before a title starts the next (a second): an upstream that changes its title
    /// at every metadata block costs one link (header pages to every listener) a second, not one a block.
    package static let minLinkPackets: Int64 = 50
    /// The title of the link that starts once the frame being filled is encoded (as a keyframe), or once the link
    /// in force is `minLinkPackets` long.
    private var pendingTitle: String?
    /// The timeline of the last page written (see `OggPage.timeline`).
    private var lastTimeline: Int64 = 0

    public static var vendor: String { "radio-relay \(RadioRelayVersion.string) (\(OpusEncoderHandle.libraryVersion))" }

    /// Applies `new`'s bitrate, complexity and constrained VBR from the next frame on (a reload): the stream, its
    /// headers and granules go on. Any other difference is refused: it would change the Ogg stream.
    public func retune(_ new: EncoderConfiguration) throws {
        guard new.sameStream(as: configuration) else {
            throw ConfigurationError("only the bitrate, complexity and constrained VBR change on a running encoder")
        }
        try new.validate()
        try opus.retune(bitrate: new.bitrate, complexity: new.complexity, constrainedVBR: new.constrainedVBR)
        configuration = new
    }

    public init(_ configuration: EncoderConfiguration) throws {
        try configuration.validate()
        self.configuration = configuration
        opus = try OpusEncoderHandle(
            channels: configuration.channels, bitrate: configuration.bitrate, complexity: configuration.complexity,
            constrainedVBR: configuration.constrainedVBR, frameSamples: configuration.frameDuration * 48,
            lowDelay: configuration.lowDelay)
        ogg = try OggStream(serial: configuration.serial)
        resampler =
            configuration.inputRate == OpusClock.rate
            ? nil
            : try Resampler(
                inputRate: configuration.inputRate, outputRate: OpusClock.rate, channels: 2,
                interleavedInput: false, quality: configuration.lowDelay ? .low : .high)
        preSkip = opus.lookahead
        packetsPerPage = max(1, configuration.pageDuration / configuration.frameDuration)
        frame = .allocate(capacity: opus.frameSamples * configuration.channels)
        packet = .allocate(capacity: OpusEncoderHandle.maxPacket)

        writeHeaders(preSkip: preSkip, comments: configuration.comments)
        headerPages = pages
        pages.removeAll(keepingCapacity: true)
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
        // The position after the last input sample on the encoder's continuous output (which runs `preSkip` ahead).
        let total = Int64(preSkip) + samplesIn
        let frameSize = Int64(opus.frameSamples)
        let packetsNeeded = (total + frameSize - 1) / frameSize
        while packetsOut < packetsNeeded {
            let channels = configuration.channels
            for i in frameFill * channels..<opus.frameSamples * channels { frame[i] = 0 }
            frameFill = opus.frameSamples
            let last = packetsOut + 1 == packetsNeeded
            try encodeFrame(granule: last ? total - linkOrigin * frameSize : nil, end: last)
        }
        flushPages()
        isFinished = true
        return takePages()
    }

    /// Starts a new link titled `title` at the current input position: the link being written ends with the packet
    /// that holds this position (encoded as a keyframe), and the next `encode` returns its last page, flagged
    /// end-of-stream, then the new link's header pages. A second call before that packet is encoded only replaces
    /// the title. Ignored at the end of the stream (`finish` writes no new link).
    public func startLink(title: String) throws {
        precondition(!isFinished, "startLink after finish")
        if pendingTitle == nil { try opus.setPredictionDisabled(true) }
        pendingTitle = title
    }

    private func take(_ left: [Float], _ right: [Float]) throws {
        samplesIn += Int64(left.count)
        var index = 0
        let count = left.count
        while index < count {
            let n = min(count - index, opus.frameSamples - frameFill)
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
            if frameFill == opus.frameSamples { try encodeFrame(granule: nil, end: false) }
        }
    }

    private func encodeFrame(granule: Int64?, end: Bool) throws {
        let length = try opus.encode(frame, into: packet)
        frameFill = 0
        packetsOut += 1
        var title = pendingTitle
        let linkSamples = (packetsOut - 1 - linkOrigin) * Int64(opus.frameSamples)
        if title != nil && !end && linkSamples < Self.minLinkPackets * Int64(OpusEncoderHandle.frameSize) {
            title = nil  // the link in force is younger than a second: the title waits (a newer one replacing it)
        }
        if title != nil || end, pendingTitle != nil {
            pendingTitle = nil
            try opus.setPredictionDisabled(false)
        }
        let cut = title != nil && !end
        let position = granule ?? (packetsOut - linkOrigin) * Int64(opus.frameSamples)
        let bytes = UnsafeRawBufferPointer(start: packet, count: length)
        ogg.append(bytes, granule: position, end: end || cut)
        packetsInPage += 1
        if let title, cut {
            flushPages()
            try beginLink(title: title, keyframe: bytes)
        } else if packetsInPage >= packetsPerPage {
            flushPages()
            packetsInPage = 0
        }
    }

    /// The new link after a cut: a fresh serial (never the previous one), OpusHead with a pre-skip of one frame and
    /// OpusTags with the title, each on its own flushed page, then the keyframe again as its first packet.
    private func beginLink(title: String, keyframe: UnsafeRawBufferPointer) throws {
        ogg = try OggStream(serial: ogg.serial &+ .random(in: 1...UInt32.max))
        linksStarted += 1
        linkOrigin = packetsOut - 1
        let comments = configuration.comments.filter { !$0.uppercased().hasPrefix("TITLE=") } + ["TITLE=\(title)"]
        writeHeaders(preSkip: opus.frameSamples, comments: comments)
        ogg.append(keyframe, granule: Int64(opus.frameSamples))
        packetsInPage = 1
        if packetsInPage >= packetsPerPage {
            flushPages()
            packetsInPage = 0
        }
    }

    /// OpusHead on the BOS page, then OpusTags, each flushed onto its own page.
    private func writeHeaders(preSkip: Int, comments: [String]) {
        ogg.append(
            Self.opusHead(preSkip: preSkip, originalRate: configuration.originalRate, channels: configuration.channels),
            granule: 0, beginning: true)
        flushPages(headers: true)
        ogg.append(Self.opusTags(vendor: Self.vendor, comments: comments), granule: 0)
        flushPages(headers: true)
    }

    /// Flushes the queued packets onto pages, each with its place on the stream's timeline: the link's origin plus
    /// its granule (a page on which no packet ends, and a header page, keep the last one).
    private func flushPages(headers: Bool = false) {
        for var page in ogg.flush() {
            if !headers && page.granulePosition >= 0 {
                lastTimeline = linkOrigin * Int64(opus.frameSamples) + page.granulePosition
            }
            page.timeline = lastTimeline
            page.isHeader = headers
            pages.append(page)
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
    package static func opusHead(preSkip: Int, originalRate: Int, channels: Int = 2) -> [UInt8] {
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
    package static func opusTags(vendor: String, comments: [String]) -> [UInt8] {
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
    package mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
