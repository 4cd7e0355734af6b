/// One output's live HLS stream as a pure value: the station's Opus packets (from its own Ogg pages) → CMAF media
/// segments of whole packets, each at most `segmentSeconds` long, with decode times that run on across segments,
/// init segments (one per OpusHead: a new link starts a new one, and the segment after it is a discontinuity), the
/// titles as dated marks, and each segment's program date on the wall clock. Memory is bounded: the playlist's
/// `window` segments, `retained` more that left it but stay fetchable (RFC 8216 §6.2.2), at most `maxBytes` of them.
/// The wall clock comes in as `now` (Unix seconds), so every rule runs on virtual time in tests.
package struct HLSSegmenter: Sendable {
    package struct Settings: Sendable, Equatable {
        /// The most audio in one segment (whole packets: a segment ends before the packet that would pass it).
        package var segmentSeconds = 2.0
        /// Segments in the playlist.
        package var window = 6
        /// Bytes of segments held at most (the newest segment is always kept).
        package var maxBytes = 8 << 20

        package init(segmentSeconds: Double = 2.0, window: Int = 6) {
            self.segmentSeconds = segmentSeconds
            self.window = window
        }

        /// Segments kept after they left the playlist: available for their own duration and the playlist's.
        package var retained: Int { window + 1 }
        package var segmentSamples: Int { Int((segmentSeconds * Double(CMAFOpus.timescale)).rounded(.down)) }
        /// `EXT-X-TARGETDURATION`: whole seconds no segment exceeds.
        package var targetDuration: Int { Int(segmentSeconds.rounded(.up)) }
        package static let segmentRange = 0.5...10.0
        package static let windowRange = 3...30
    }

    package struct Segment: Sendable {
        package let sequence: Int
        /// The init segment it needs (`InitSegment.id`).
        package let map: Int
        /// Whether an `EXT-X-DISCONTINUITY` comes before it (a new link), and its discontinuity sequence number.
        package let discontinuity: Bool
        package let discontinuitySequence: Int
        /// Its first sample on the track's timeline (48 kHz), and its samples.
        package let decodeTime: Int64
        package let samples: Int
        /// Unix seconds: when its first sample plays (`EXT-X-PROGRAM-DATE-TIME`), and when it was made.
        package let programDate: Double
        package let made: Double
        package let bytes: [UInt8]

        package var seconds: Double { Double(samples) / Double(CMAFOpus.timescale) }
    }

    package struct InitSegment: Sendable {
        /// The sequence number of the first segment that uses it: names it, and no two share one.
        package let id: Int
        package let head: OpusPacketInfo.Head
        package let made: Double
        package let bytes: [UInt8]
    }

    /// A title from the upstream and when it started playing (`EXT-X-DATERANGE`).
    package struct TitleMark: Sendable, Equatable {
        package let id: Int
        package let start: Double
        package let title: String
    }

    package struct Statistics: Sendable, Equatable {
        /// Packets dropped: before any OpusHead, or whose TOC byte says nothing valid.
        package var droppedPackets = 0
        /// OpusHead packets that were not one.
        package var badHeads = 0
        package var segments = 0
    }

    package let settings: Settings
    package private(set) var segments: [Segment] = []
    package private(set) var maps: [InitSegment] = []
    package private(set) var titles: [TitleMark] = []
    package private(set) var statistics = Statistics()
    private var head: OpusPacketInfo.Head?
    private var currentMap = 0
    private var nextSequence: Int
    private var breakNext = false
    private var discontinuities = 0
    private var titleCount = 0
    private var heldBytes = 0
    /// The track's clock, and where the wall clock met it last (re-anchored when they drift apart by a second).
    private var decodeTime: Int64 = 0
    private var anchor: (wall: Double, decode: Int64)?
    /// The segment being gathered.
    private var data: [UInt8] = []
    private var sizes: [(size: Int, duration: Int)] = []
    private var gathered = 0
    private var gatherStart: Int64 = 0
    private var gatherDate = 0.0

    /// - Parameter firstSequence: the first segment's media sequence number.
    package init(_ settings: Settings, firstSequence: Int) {
        self.settings = settings
        nextSequence = max(0, firstSequence)
    }

    /// The segments in the playlist: the newest `window`.
    package var playlistSegments: ArraySlice<Segment> { segments.suffix(settings.window) }

    /// A link's OpusHead: what follows belongs to a new init segment, after a discontinuity (but for the first).
    package mutating func start(headPacket: [UInt8], now: Double) {
        guard let parsed = OpusPacketInfo.head(headPacket) else {
            statistics.badHeads += 1
            return
        }
        begin(parsed, now: now)
    }

    /// Another upstream stream carried on in the same link (an edge's upstream with a new serial): a new segment,
    /// after a discontinuity, with an init segment of its own, so players start their decoders afresh there.
    package mutating func restart(now: Double) {
        guard let head else { return }
        begin(head, now: now)
    }

    private mutating func begin(_ parsed: OpusPacketInfo.Head, now: Double) {
        close(now: now)
        if head != nil { breakNext = true }
        head = parsed
        currentMap = nextSequence
        maps.removeAll { $0.id == nextSequence }  // one no segment used: replaced
        maps.append(InitSegment(id: nextSequence, head: parsed, made: now, bytes: CMAFOpus.initSegment(parsed)))
        anchor = nil
        pruneMaps()
    }

    /// One audio packet; a segment closes first when this packet would take it past the target. True when a
    /// segment closed.
    @discardableResult
    package mutating func append(_ packet: [UInt8], now: Double) -> Bool {
        guard head != nil, let duration = OpusPacketInfo.samples(packet) else {
            statistics.droppedPackets += 1
            return false
        }
        var closed = false
        if gathered > 0 && gathered + duration > settings.segmentSamples {
            closed = close(now: now)
        }
        if sizes.isEmpty {
            gatherStart = decodeTime
            gatherDate = date(at: decodeTime, now: now)
        }
        data.append(contentsOf: packet)
        sizes.append((packet.count, duration))
        gathered += duration
        decodeTime = decodeTime.addingReportingOverflow(Int64(duration)).partialValue
        return closed
    }

    /// A new title, starting with the next packet.
    package mutating func title(_ title: String, now: Double) {
        guard titles.last?.title != title else { return }
        titleCount += 1
        titles.append(TitleMark(id: titleCount, start: date(at: decodeTime, now: now), title: title))
        pruneTitles()
    }

    /// Ends the segment being gathered (when it holds anything): true when it did.
    @discardableResult
    package mutating func close(now: Double) -> Bool {
        guard !sizes.isEmpty else { return false }
        let sequence = nextSequence
        nextSequence += 1
        let bytes = CMAFOpus.mediaSegment(
            sequence: UInt32(truncatingIfNeeded: sequence), decodeTime: UInt64(clamping: gatherStart), samples: sizes,
            data: data)
        if breakNext { discontinuities += 1 }
        segments.append(
            Segment(
                sequence: sequence, map: currentMap, discontinuity: breakNext, discontinuitySequence: discontinuities,
                decodeTime: gatherStart, samples: gathered, programDate: gatherDate, made: now, bytes: bytes))
        breakNext = false
        heldBytes += bytes.count
        statistics.segments += 1
        data.removeAll(keepingCapacity: true)
        sizes.removeAll(keepingCapacity: true)
        gathered = 0
        while segments.count > settings.window + settings.retained
            || (heldBytes > settings.maxBytes && segments.count > 1)
        {
            heldBytes -= segments.removeFirst().bytes.count
        }
        pruneMaps()
        pruneTitles()
        return true
    }

    /// The wall-clock time of `decode` on the track: the anchor's, unless the two clocks drifted a second apart.
    private mutating func date(at decode: Int64, now: Double) -> Double {
        if let anchor {
            let date = anchor.wall + Double(decode - anchor.decode) / Double(CMAFOpus.timescale)
            if abs(date - now) <= 1 { return date }
        }
        anchor = (now, decode)
        return now
    }

    /// Init segments no kept segment needs go, but for the one in force.
    private mutating func pruneMaps() {
        let oldest = segments.first?.map ?? currentMap
        maps.removeAll { $0.id < oldest && $0.id != currentMap }
    }

    /// Titles that ended before the playlist's first segment go (the one playing then stays).
    private mutating func pruneTitles() {
        guard let first = playlistSegments.first else { return }
        while titles.count > 1 && titles[1].start <= first.programDate { titles.removeFirst() }
        if titles.count > 64 { titles.removeFirst(titles.count - 64) }
    }
}
