import RadioRelaySystem

/// Reads an archive file's bytes, in any chunking, into its index entry (`ArchiveIndex.File`): where its pages (its
/// MP3 frames) start and at what time, and how many of its bytes are whole pages (a crash can leave a torn page at
/// the end, which `validSize` leaves out). The writer feeds it the bytes it writes; a restart feeds it a file it
/// finds. Trusts nothing: an Ogg page must have its capture pattern and CRC (`OggPageHeader`, `OggCRC`), an MP3
/// frame a valid header (`MP3FrameHeader`); the first that is not ends the file's valid part. Memory is bounded by
/// one page (64 KiB).
///
/// Times: a file starts at the time its name says; an Ogg page's first sample is at the granule of the page before
/// it (48 kHz; the header pages carry granule 0), an MP3 frame's after the frames before it.
package struct ArchiveScanner: Sendable {
    package let format: ArchiveName.Format
    private var builder: ArchiveIndex.File
    /// Bytes fed and not yet read as a whole page or frame.
    private var pending: [UInt8] = []
    /// The file's bytes read as whole pages (frames).
    package private(set) var validSize: Int64 = 0
    /// Where the last page (frame) of audio starts.
    package private(set) var lastUnitOffset: Int64 = 0
    /// Something that is not a page (a frame) was found: nothing after it counts.
    package private(set) var isDamaged = false
    /// The granule of the last page (Ogg), or the seconds of the frames read (MP3).
    private var granule: Int64 = 0
    private var seconds = 0.0
    private var lastPoint: Int64

    package init(name: String, start: Int64, format: ArchiveName.Format) {
        self.format = format
        builder = ArchiveIndex.File(
            name: name, start: start, end: start, size: 0, points: [ArchiveIndex.Point(time: start, offset: 0)])
        lastPoint = start
    }

    /// The index entry of what was read so far.
    package var file: ArchiveIndex.File {
        var file = builder
        file.size = validSize
        return file
    }

    /// The audio read so far was all published by `published` (ms since the epoch): when that says the file started
    /// earlier than its start (more than 20 ms: a station's pages published ahead of real time at its start), the
    /// start, the points and the end move back by the difference.
    package mutating func anchor(published: Int64) {
        let audio = builder.end &- builder.start
        let (start, overflow) = published.subtractingReportingOverflow(audio)
        guard !overflow, start < builder.start - 20, start > builder.start - Self.maxAnchorShift else { return }
        let shift = builder.start - start
        builder.start = start
        builder.end -= shift
        for index in builder.points.indices { builder.points[index].time -= shift }
        lastPoint -= shift
    }

    /// How far back a file's start may move from the second its name says.
    package static let maxAnchorShift: Int64 = 10_000

    /// Reads `bytes`, the next ones of the file.
    package mutating func feed(_ bytes: some Collection<UInt8>) {
        guard !isDamaged else { return }
        pending.append(contentsOf: bytes)
        var used = 0
        while !isDamaged, let length = format == .opus ? oggPage(at: used) : mp3Frame(at: used) {
            used += length
        }
        pending.removeFirst(used)
    }

    /// Records a page (frame) at `validSize` that starts at `time`, and moves on by `length`.
    private mutating func unit(length: Int, time: Int64, end: Int64) {
        if time >= lastPoint + ArchiveIndex.pointInterval {
            builder.points.append(ArchiveIndex.Point(time: time, offset: validSize))
            lastPoint = time
        }
        lastUnitOffset = validSize
        validSize += Int64(length)
        builder.end = max(builder.end, end)
    }

    private func time(ofGranule granule: Int64) -> Int64 {
        builder.start &+ granule / 48
    }

    /// The length of the whole Ogg page at `offset` of `pending` (recorded), nil when more bytes are needed or it is
    /// not a page (then `isDamaged`).
    private mutating func oggPage(at offset: Int) -> Int? {
        switch ArchiveUnit.find(in: pending, at: offset, format: .opus) {
        case .ogg(let length, let position, _):
            let previous = granule
            if position > granule { granule = position }
            if position == 0 && previous == 0 {
                validSize += Int64(length)  // a header page: no audio, no point
            } else {
                unit(length: length, time: time(ofGranule: previous), end: time(ofGranule: granule))
            }
            return length
        case .damaged, .mp3:
            isDamaged = true
            return nil
        case .needsMore:
            return nil
        }
    }

    /// The length of the whole MP3 frame at `offset` of `pending` (recorded), nil when more bytes are needed or it
    /// is not a frame (then `isDamaged`).
    private mutating func mp3Frame(at offset: Int) -> Int? {
        switch ArchiveUnit.find(in: pending, at: offset, format: .mp3) {
        case .mp3(let length, let samples, let rate):
            let begins = builder.start &+ Int64((seconds * 1000).rounded(.down))
            seconds += Double(samples) / Double(max(1, rate))
            unit(length: length, time: begins, end: builder.start &+ Int64((seconds * 1000).rounded(.down)))
            return length
        case .damaged, .ogg:
            isDamaged = true
            return nil
        case .needsMore:
            return nil
        }
    }
}
