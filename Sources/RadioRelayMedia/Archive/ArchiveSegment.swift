import RadioRelaySystem

/// One segment of an archive's HLS playlist (`/NAME/archive.m3u8`, `archive-ts.m3u8`): the Opus packets of the
/// archive's Ogg pages that start in `from ..< to` (ms since the epoch), packed as one CMAF media segment
/// (`CMAFOpus.mediaSegment`), its decode time the first packet's start in 48 kHz samples since the epoch, or as an
/// MPEG-TS segment (`MPEGTSOpus`), each packet's PTS its start, so that segments that follow each other follow each
/// other on the player's timeline too. Fed the pages of one or more files in order (`enter` at
/// each file's start); the header pages are passed over. A pure value over untrusted bytes (tests:
/// `ArchiveHLSTests`).
package struct ArchiveSegment: Sendable {
    /// Seconds of one segment: a playlist of three hours lists 1 080 of them.
    package static let seconds: Int64 = 10

    package let from: Int64
    package let to: Int64
    private(set) var packets: [(bytes: [UInt8], duration: Int, start: Int64)] = []
    /// The channels of the file's OpusHead (the MPEG-TS rendition's descriptor says them).
    package private(set) var channels = 2
    /// The first packet's start, in 48 kHz samples since the epoch.
    package private(set) var decodeTime: Int64?
    private var fileStart: Int64 = 0
    private var granule: Int64 = 0
    private var audio = false
    private var partial: [UInt8] = []
    /// A packet that starts at or after `to` was read: nothing more belongs here.
    package private(set) var isComplete = false

    /// `channels`: the stream's until a file's OpusHead is read (a segment read from inside a file sees none).
    package init(from: Int64, to: Int64, channels: Int = 2) {
        self.from = from
        self.to = to
        self.channels = channels
    }

    /// The pages that follow are the file that starts at `start`.
    package mutating func enter(fileStart start: Int64) {
        fileStart = start
        granule = 0
        audio = false
        partial = []
    }

    /// One whole page of the file.
    package mutating func page(_ bytes: [UInt8]) {
        guard !isComplete, let header = OggPageHeader.decode(bytes, at: 0),
            let spans = OggPageHeader.packets(of: bytes)
        else { return }
        var completed: [[UInt8]] = []
        var current = header.isContinued ? partial : []
        for span in spans {
            current += bytes[span.range]
            if span.isComplete {
                completed.append(current)
                current = []
            }
        }
        partial = current
        if !audio && header.granulePosition == 0 {  // OpusHead, OpusTags
            if let head = completed.first.flatMap(OpusPacketInfo.head) { channels = head.channels }
            return
        }
        audio = true
        let durations = completed.map { OpusPacketInfo.samples($0) ?? 0 }
        let total = durations.reduce(0, +)
        var start = header.granulePosition >= 0 ? header.granulePosition - Int64(total) : granule
        if start < granule { start = granule }
        for (packet, duration) in zip(completed, durations) where duration > 0 {
            let samples = (fileStart &* 48) &+ start
            let millis = fileStart &+ start / 48
            start += Int64(duration)
            if millis >= to {
                isComplete = true
                return
            }
            guard millis >= from else { continue }
            if decodeTime == nil { decodeTime = samples }
            packets.append((packet, duration, samples))
        }
        granule = max(granule, start)
    }

    /// The media segment, numbered `sequence`; nil when no packet of it was read.
    package func segment(sequence: UInt32) -> [UInt8]? {
        guard let decodeTime, decodeTime >= 0, !packets.isEmpty else { return nil }
        return CMAFOpus.mediaSegment(
            sequence: sequence, decodeTime: UInt64(decodeTime),
            samples: packets.map { ($0.bytes.count, $0.duration) }, data: packets.flatMap(\.bytes))
    }

    /// The segment in MPEG-TS, numbered `sequence`; nil when no packet of it was read.
    package func transportStream(sequence: UInt32) -> [UInt8]? {
        guard !packets.isEmpty else { return nil }
        return MPEGTSOpus.segment(
            sequence: sequence, channels: channels, packets: packets.map { ($0.bytes, $0.start) })
    }
}
