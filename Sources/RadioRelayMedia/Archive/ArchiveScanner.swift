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
        guard pending.count - offset >= OggPageHeader.length else { return nil }
        guard let header = OggPageHeader.decode(pending, at: offset) else {
            isDamaged = true
            return nil
        }
        let bodyStart = offset + OggPageHeader.length + header.segments
        guard pending.count >= bodyStart else { return nil }
        var bodyLength = 0
        for index in offset + OggPageHeader.length..<bodyStart { bodyLength += Int(pending[index]) }
        let length = OggPageHeader.length + header.segments + bodyLength
        guard pending.count - offset >= length else { return nil }
        guard OggCRC.page(pending[offset..<offset + length]) == header.checksum else {
            isDamaged = true
            return nil
        }
        let previous = granule
        if header.granulePosition > granule { granule = header.granulePosition }
        if header.granulePosition == 0 && previous == 0 {
            validSize += Int64(length)  // a header page: no audio, no point
        } else {
            unit(length: length, time: time(ofGranule: previous), end: time(ofGranule: granule))
        }
        return length
    }

    /// The length of the whole MP3 frame at `offset` of `pending` (recorded), nil when more bytes are needed or it
    /// is not a frame (then `isDamaged`).
    private mutating func mp3Frame(at offset: Int) -> Int? {
        guard pending.count - offset >= 4 else { return nil }
        guard
            let header = MP3FrameHeader(
                pending[offset], pending[offset + 1], pending[offset + 2], pending[offset + 3]),
            header.frameLength > 4
        else {
            isDamaged = true
            return nil
        }
        let length = header.frameLength
        guard pending.count - offset >= length else { return nil }
        let begins = builder.start &+ Int64((seconds * 1000).rounded(.down))
        seconds += Double(header.samplesPerFrame) / Double(max(1, header.sampleRate))
        unit(length: length, time: begins, end: builder.start &+ Int64((seconds * 1000).rounded(.down)))
        return length
    }
}
