import RadioRelaySystem

/// Parser: audio bytes in any chunking → MP3 packets (one frame each) and the stream's `DataFormat`.
///
/// Sync needs consecutive valid headers: while searching, a candidate frame is accepted only when the next two
/// headers it points at are valid and compatible (same version, layer and rate); once synced, each frame needs the
/// next header to confirm it. A frame whose successor is not a header (garbage spliced into its middle, a truncated
/// frame) is dropped rather than handed to the decoder. Every decision waits until the bytes it looks at have
/// arrived, so feeding one byte at a time yields exactly what one big chunk does, in both modes: the same packets,
/// format events, statistics and gapless info.
///
/// The Parser keeps only a carry-over of the bytes not yet decided on: at most a few frames. Packets are handed to
/// the caller and never kept.
public final class Parser {
    public enum Event {
        /// The first frame's format, and every later change of rate, channels or layer.
        case format(DataFormat)
        case packet(AudioPacket)
    }

    public struct Statistics: Equatable, Sendable {
        public var packets = 0
        /// Bytes that were neither audio frames nor tags: garbage, damaged frames, an unfinished frame at the end.
        public var bytesSkipped = 0
        public var id3TagsSkipped = 0
        public var tagBytesSkipped = 0
        public var infoFramesSkipped = 0
        /// Times a synced stream lost sync (garbage or a truncated frame).
        public var syncLosses = 0

        public init() {}
    }

    public private(set) var dataFormat: DataFormat?
    /// Encoder delay and padding from the first LAME/Xing tag, when it came before any audio.
    public private(set) var gapless: GaplessInfo?
    public private(set) var statistics = Statistics()

    private var buffer: [UInt8] = []
    private var start = 0
    private var skipRemaining = 0
    private var locked: MP3FrameHeader?
    private var emittedAudio = false
    private var skippedAtLastPacket = 0
    private var afterReset = false

    /// Headers a candidate needs after it while searching for sync.
    package static let confirmationsWhileSearching = 2
    /// A frame at the largest legal size: MPEG-2.5 layer III at 160 kb/s, 8 kHz is 2 880 bytes (+1 padding).
    package static let maxFrameLength = 2881

    /// Whether a synced frame waits for the next header before it is handed on (see `init`).
    public let confirmsFrames: Bool

    /// - Parameter confirmsFrames: true (for files): a synced frame is handed on only once the next header confirms
    ///   it, so a frame cut short by garbage never reaches the decoder. false (for live relaying): handed on as soon
    ///   as it is complete, one frame (26 ms) sooner; a damaged frame may then pass before sync is lost. Searching
    ///   for sync needs three consecutive headers either way.
    /// - Parameter maxTagLength: the longest ID3v2 tag skipped as a tag; a header announcing more is taken for
    ///   garbage and searched through (live streams: a corrupt size must not skip megabytes of audio). Files keep
    ///   the default, the format's own limit (256 MiB), so a leading tag with large cover art is skipped whole.
    public init(confirmsFrames: Bool = true, maxTagLength: Int = .max) {
        self.confirmsFrames = confirmsFrames
        self.maxTagLength = maxTagLength
    }

    /// See `init(confirmsFrames:maxTagLength:)`.
    public let maxTagLength: Int
    /// The bound live stations use: 1 MiB, far more than a tag with a title and a small picture needs.
    public static let liveTagLimit = 1 << 20

    /// Bytes held while waiting for more input (bounded by a few frame lengths).
    public var carryOverCount: Int { buffer.count - start }

    /// Feeds the next chunk of the stream. An error thrown by `handle` ends this call and reaches the caller; the
    /// packet it was handling is consumed, everything after it stays in the carry-over for the next call.
    public func parse(_ bytes: UnsafeRawBufferPointer, _ handle: (Event) throws -> Void) rethrows {
        guard !bytes.isEmpty else { return }
        var input = bytes[...]
        if skipRemaining > 0 {
            let n = min(skipRemaining, input.count)
            skipRemaining -= n
            statistics.tagBytesSkipped += n
            input = input.dropFirst(n)
        }
        buffer.append(contentsOf: input)
        try process(final: false, handle)
    }

    public func parse(_ bytes: [UInt8], _ handle: (Event) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { try parse($0, handle) }
    }

    /// Ends the stream: decides on the bytes still held (a complete last frame is emitted, a truncated one dropped).
    public func finish(_ handle: (Event) throws -> Void) rethrows {
        try process(final: true, handle)
        statistics.bytesSkipped += buffer.count - start
        buffer.removeAll()
        start = 0
    }

    /// Forgets sync and carry-over, for a new connection to the upstream. Format and statistics stay.
    public func reset() {
        statistics.bytesSkipped += buffer.count - start
        buffer.removeAll()
        start = 0
        skipRemaining = 0
        locked = nil
        afterReset = emittedAudio
    }

    private enum Check { case accept, reject, wait }

    private func process(final: Bool, _ handle: (Event) throws -> Void) rethrows {
        defer { compact() }
        loop: while true {
            if skipRemaining > 0 {
                let n = min(skipRemaining, buffer.count - start)
                skipRemaining -= n
                start += n
                statistics.tagBytesSkipped += n
                if skipRemaining > 0 { break }
            }
            let available = buffer.count - start
            if available < 4 { break }
            if buffer[start] == 0x49 {  // "I": maybe an ID3v2 tag
                switch id3TagLength(at: start, final: final) {
                case .some(.some(let length)):
                    statistics.id3TagsSkipped += 1
                    skipRemaining = length
                    continue loop
                case .some(.none):
                    break  // not a tag (or one over maxTagLength): garbage
                case .none:
                    break loop  // wait for the full tag header
                }
                loseSync()
                discardGarbage()
                continue
            }
            if locked != nil, buffer[start] == 0x54, buffer[start + 1] == 0x41, buffer[start + 2] == 0x47 {
                // "TAG" right after a frame: an ID3v1 tag (128 bytes), the usual end of an MP3 file.
                statistics.id3TagsSkipped += 1
                skipRemaining = 128
                locked = nil
                continue
            }
            guard let header = header(at: start) else {
                loseSync()
                discardGarbage()
                continue
            }
            let confirmations: Int
            if let locked, locked.isCompatible(with: header) {
                confirmations = confirmsFrames ? 1 : 0
            } else {
                confirmations = Self.confirmationsWhileSearching
            }
            switch check(header, confirmations: confirmations, final: final) {
            case .wait:
                break loop
            case .reject:
                loseSync()
                discardGarbage()
            case .accept:
                try emit(header, handle)
            }
        }
    }

    /// Follows the chain of frame lengths from a candidate; each next position must hold a compatible header (or a
    /// tag, or the end of a finished stream).
    private func check(_ first: MP3FrameHeader, at origin: Int? = nil, confirmations: Int, final: Bool) -> Check {
        var position = origin ?? start
        var current = first
        if confirmations == 0 {
            let end = position + first.frameLength
            return end <= buffer.count ? .accept : (final ? .reject : .wait)
        }
        // While searching, the end of the stream or a tag only ends a chain that already has a confirmed header.
        let minimum = confirmations > 1 ? 1 : 0
        for confirmed in 0..<confirmations {
            position += current.frameLength
            if position + 4 > buffer.count {
                if !final { return .wait }
                // At the end of the stream a frame that ends exactly at the last byte is complete.
                return position <= buffer.count && confirmed >= minimum ? .accept : .reject
            }
            if isTagStart(at: position) { return confirmed >= minimum ? .accept : .reject }
            guard let next = header(at: position) else { return .reject }
            guard next.isCompatible(with: first) else {
                // A synced frame followed by a header of another format: a real format change (a new rate or
                // channel count mid-stream) when that header starts a confirmed chain of its own.
                guard confirmations == 1 else { return .reject }
                return check(next, at: position, confirmations: Self.confirmationsWhileSearching, final: final)
            }
            current = next
        }
        return .accept
    }

    private func emit(_ header: MP3FrameHeader, _ handle: (Event) throws -> Void) rethrows {
        let length = header.frameLength
        let frame = Array(buffer[start..<start + length])
        start += length
        locked = header
        if header.layer == 3, header.isInfoFrame(frame) {
            statistics.infoFramesSkipped += 1
            if !emittedAudio, gapless == nil { gapless = header.gaplessInfo(frame) }
            return
        }
        let format = DataFormat(header)
        if dataFormat.map({ !$0.hasSameShape(as: format) }) ?? true {
            dataFormat = format
            try handle(.format(format))
        }
        emittedAudio = true
        statistics.packets += 1
        let gap = statistics.bytesSkipped != skippedAtLastPacket || afterReset
        skippedAtLastPacket = statistics.bytesSkipped
        afterReset = false
        try handle(.packet(AudioPacket(bytes: frame, header: header, followsGap: gap)))
    }

    /// Garbage where a synced stream's next frame should start. Every path that discards bytes goes through here
    /// first, so no byte is ever discarded while synced: `discardGarbage` stops at the end of what has arrived, and a
    /// lock kept past that point would make the next chunk's first byte count as a sync loss that one big chunk
    /// (which skips straight to the next 0xFF or "I") never sees.
    private func loseSync() {
        if locked != nil { statistics.syncLosses += 1 }
        locked = nil
    }

    /// Skips the byte at `start` and everything up to the next byte that could begin a header or a tag.
    private func discardGarbage() {
        var i = start + 1
        let end = buffer.count
        while i < end, buffer[i] != 0xFF, buffer[i] != 0x49 { i += 1 }
        statistics.bytesSkipped += i - start
        start = i
    }

    private func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 16)
            start = 0
        } else if start > 4096 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
    }

    private func header(at i: Int) -> MP3FrameHeader? {
        MP3FrameHeader(buffer[i], buffer[i + 1], buffer[i + 2], buffer[i + 3])
    }

    private func isTagStart(at i: Int) -> Bool {
        let b = (buffer[i], buffer[i + 1], buffer[i + 2])
        return b == (0x49, 0x44, 0x33) || b == (0x54, 0x41, 0x47)  // "ID3", "TAG" (ID3v1 at the end of a file)
    }

    /// nil: wait for more bytes; .some(nil): not an ID3v2 tag; .some(n): a tag of n bytes (header, body, footer).
    private func id3TagLength(at i: Int, final: Bool) -> Int?? {
        if buffer.count - i < 10 { return final ? .some(nil) : nil }
        guard buffer[i + 1] == 0x44, buffer[i + 2] == 0x33,
            (2...4).contains(buffer[i + 3]), buffer[i + 4] != 0xFF,
            buffer[i + 6] < 0x80, buffer[i + 7] < 0x80, buffer[i + 8] < 0x80, buffer[i + 9] < 0x80
        else { return .some(nil) }
        let size = Int(buffer[i + 6]) << 21 | Int(buffer[i + 7]) << 14 | Int(buffer[i + 8]) << 7 | Int(buffer[i + 9])
        let hasFooter = buffer[i + 3] == 4 && buffer[i + 5] & 0x10 != 0
        let length = 10 + size + (hasFooter ? 10 : 0)
        return length <= maxTagLength ? .some(length) : .some(nil)
    }
}

@available(*, unavailable) extension Parser: Sendable {}
