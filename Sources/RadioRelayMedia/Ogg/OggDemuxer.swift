import RadioRelaySystem

/// Ogg pages from an untrusted byte stream (another relay, an Icecast Ogg mount) → the packets of its Opus logical
/// stream, for an edge relay that passes them on without decoding.
///
/// Contract: never traps, whatever the bytes; bounded memory (at most one page beyond what was appended, and one
/// partial packet of at most `maxPacket` bytes); loses sync on garbage — a missing capture pattern, another version,
/// a bad CRC — and finds the next page by its capture pattern, counting what it skipped. Only one logical stream is
/// followed: the first whose first packet is OpusHead; a new one starting (a chained link, or the upstream
/// restarted with a new serial) replaces it. Other multiplexed streams (video, Vorbis, skeleton) are ignored.
package struct OggDemuxer {
    package enum Event: Equatable, Sendable {
        /// A new Opus logical stream: its serial and OpusHead.
        case head(serial: UInt32, OpusPacketInfo.Head)
        /// Its OpusTags' comments.
        case tags(serial: UInt32, comments: [String])
        /// An audio packet, with the granule position at its end when the page says it (the page's last packet,
        /// and the packets before it counted back from it by their durations).
        case audio(serial: UInt32, packet: [UInt8], endGranule: Int64?)
    }

    package struct Statistics: Equatable, Sendable {
        package var pages = 0
        package var bytesSkipped = 0
        /// Pages whose CRC did not match.
        package var badPages = 0
        /// Packets dropped: malformed, too long, or cut by a lost page.
        package var droppedPackets = 0
        /// Bytes of candidate pages checksummed (the work resynchronisation costs).
        package var crcBytes = 0
    }

    /// The longest Opus packet kept (RFC 6716 allows 1275 bytes per frame, 48 frames).
    package static let maxPacket = 64 * 1024
    /// Bytes kept unparsed at most before a search gives up on them (a page is at most 65 307 bytes).
    package static let maxBuffer = 2 * 65_536

    /// CRC bytes the demuxer may still compute: every byte appended adds `crcPerByte`, up to `maxCRCCredit`, and
    /// each candidate page's check costs its length. Real pages need one CRC byte per byte; false capture patterns
    /// (each could cost a CRC over 64 KB, ~1 800 CRC bytes per input byte at one every 36 bytes) wait for more input
    /// instead, and are dropped with the buffer's bound. Work per input byte stays a small constant.
    package static let crcPerByte = 2
    package static let maxCRCCredit = 4 * 65_536

    package private(set) var statistics = Statistics()
    private var crcCredit = maxCRCCredit
    private var buffer: [UInt8] = []
    private var offset = 0
    /// The followed stream: its serial, how many of its packets were seen (0: OpusHead, 1: OpusTags), the next
    /// page sequence expected, and the packet being continued across pages.
    private var serial: UInt32?
    private var packetCount = 0
    private var nextSequence: UInt32?
    /// The packet continuing onto the next page (nil: the last page ended with a whole packet), and whether it is
    /// already lost (too long).
    private var partial: [UInt8]?
    private var partialBroken = false

    package init() {}

    /// Forgets everything (a new connection: it starts with its header pages).
    package mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        offset = 0
        serial = nil
        crcCredit = Self.maxCRCCredit
        packetCount = 0
        nextSequence = nil
        partial = nil
        partialBroken = false
    }

    /// Parses what `bytes` completes; `handle` gets each event in order.
    package mutating func demux(_ bytes: UnsafeRawBufferPointer, _ handle: (Event) throws -> Void) rethrows {
        buffer.append(contentsOf: bytes)
        let (earned, overflow) = bytes.count.multipliedReportingOverflow(by: Self.crcPerByte)
        crcCredit = overflow ? Self.maxCRCCredit : min(Self.maxCRCCredit, crcCredit + earned)
        while let page = nextPage() { try accept(page, handle) }
        if offset > 0 {
            buffer.removeFirst(offset)
            offset = 0
        }
        if buffer.count > Self.maxBuffer {
            // Cannot happen with whole pages; bounds memory whatever the input does.
            statistics.bytesSkipped += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }
    }

    package mutating func demux(_ bytes: [UInt8], _ handle: (Event) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { try demux($0, handle) }
    }

    // MARK: Pages

    /// The next whole page with a good CRC, skipping garbage; nil when more bytes are needed.
    private mutating func nextPage() -> [UInt8]? {
        while true {
            guard let start = captureStart() else { return nil }
            if start > offset {
                statistics.bytesSkipped += start - offset
                offset = start
            }
            let available = buffer.count - offset
            guard available >= OggPageHeader.length else { return nil }
            // Cheap checks first: version 0, no header-type bits beyond the three defined.
            guard let header = OggPageHeader.decode(buffer, at: offset), header.hasDefinedFlags else {
                skip(1)
                continue
            }
            let segments = header.segments
            guard available >= 27 + segments else { return nil }
            var body = 0
            for index in 0..<segments { body += Int(buffer[offset + 27 + index]) }
            let length = 27 + segments + body
            guard available >= length else { return nil }
            if available >= length + 4 && !isCapturePattern(at: offset + length) {
                // Pages follow one another: a candidate whose end is not the next page's start is garbage, told
                // without a CRC (a page followed by garbage is lost with it).
                skip(1)
                continue
            }
            guard crcCredit >= length else { return nil }  // more input first (see `crcPerByte`)
            crcCredit -= length
            statistics.crcBytes += length
            let candidate = buffer[offset..<offset + length]
            guard OggCRC.page(candidate) == header.checksum else {
                statistics.badPages += 1
                skip(1)  // a false capture pattern, or a damaged page: look further
                continue
            }
            let page = Array(candidate)
            offset += length
            statistics.pages += 1
            return page
        }
    }

    /// Skips garbage; a page lost this way shows as a gap in the page sequence.
    private mutating func skip(_ count: Int) {
        statistics.bytesSkipped += count
        offset += count
    }

    private func isCapturePattern(at index: Int) -> Bool {
        OggPageHeader.isCapturePattern(buffer, at: index)
    }

    /// Where the next "OggS" starts, or nil (then all but the last three bytes are garbage, counted and dropped).
    private mutating func captureStart() -> Int? {
        var index = offset
        while index + 4 <= buffer.count {
            if OggPageHeader.isCapturePattern(buffer, at: index) { return index }
            index += 1
        }
        let keep = max(offset, buffer.count - 3)
        statistics.bytesSkipped += keep - offset
        offset = keep
        return nil
    }

    // MARK: Packets

    private mutating func accept(_ page: [UInt8], _ handle: (Event) throws -> Void) rethrows {
        let header = OggPage(bytes: page)
        var carried: [UInt8] = []
        var dropFirst = false
        if header.isBeginning {
            guard let first = Self.packets(of: page, carried: [], dropFirst: false).packets.first,
                let head = OpusPacketInfo.head(first)
            else { return }  // not an Opus stream: ignored
            if let partial, !partial.isEmpty { statistics.droppedPackets += 1 }
            serial = header.serial
            packetCount = 0
            partial = nil
            try handle(.head(serial: header.serial, head))
        } else {
            guard header.serial == serial else { return }  // another stream's page, or none followed yet
            if let expected = nextSequence, header.sequence != expected {
                // Pages were lost: what was being continued is gone, and so is the tail this page may start with.
                if partial != nil { statistics.droppedPackets += 1 }
                dropFirst = header.isContinued
            } else if header.isContinued {
                if let partial {
                    carried = partial
                    dropFirst = partialBroken
                } else {
                    dropFirst = true  // continues nothing: malformed
                }
            } else if partial != nil {
                statistics.droppedPackets += 1  // a packet that never finished
            }
            partial = nil
        }
        nextSequence = header.sequence &+ 1
        var (packets, rest, restBroken, dropped) = Self.packets(of: page, carried: carried, dropFirst: dropFirst)
        statistics.droppedPackets += dropped
        partial = rest
        partialBroken = restBroken
        if header.isBeginning && !packets.isEmpty {
            packets.removeFirst()  // OpusHead, handled above
            packetCount = 1
        }
        guard let serial else { return }
        // End granules: the page's for its last packet, counted back by duration for the ones before.
        var ends: [Int64?] = Array(repeating: nil, count: packets.count)
        if header.granulePosition >= 0 && !packets.isEmpty {
            var end = header.granulePosition
            for index in packets.indices.reversed() {
                ends[index] = end
                end -= Int64(OpusPacketInfo.samples(packets[index]) ?? 0)
            }
        }
        for (index, packet) in packets.enumerated() {
            defer { packetCount += 1 }
            if packetCount == 0 { continue }  // a second OpusHead cannot be: the first packet came on the BOS page
            if packetCount == 1 {
                let comments = OpusPacketInfo.tags(packet)?.comments ?? []
                try handle(.tags(serial: serial, comments: comments))
                continue
            }
            guard OpusPacketInfo.samples(packet) != nil else {
                statistics.droppedPackets += 1
                continue
            }
            try handle(.audio(serial: serial, packet: packet, endGranule: ends[index]))
        }
    }

    /// The packets a page completes (the first prefixed by `carried`, dropped when `dropFirst`), the packet it
    /// leaves unfinished (nil when it ends on a packet boundary) and whether that one is already too long (over
    /// `limit` bytes: dropped), and how many packets were dropped. The page must be whole (its lacing values and
    /// body within `page`).
    package static func packets(of page: [UInt8], carried: [UInt8], dropFirst: Bool, limit: Int = maxPacket) -> (
        packets: [[UInt8]], rest: [UInt8]?, restBroken: Bool, dropped: Int
    ) {
        let segments = Int(page[26])
        var packets: [[UInt8]] = []
        var position = 27 + segments
        var current = carried
        var broken = dropFirst
        var dropped = 0
        var open = false
        for index in 0..<segments {
            let lace = Int(page[27 + index])
            if current.count + lace <= limit {
                current.append(contentsOf: page[position..<position + lace])
            } else {
                broken = true
            }
            position += lace
            open = lace == 255
            if !open {
                if broken { dropped += 1 } else { packets.append(current) }
                current = []
                broken = false
            }
        }
        return open || (segments == 0 && !carried.isEmpty)
            ? (packets, current, broken, dropped) : (packets, nil, false, dropped)
    }
}
