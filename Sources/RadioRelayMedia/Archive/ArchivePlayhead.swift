import RadioRelaySystem

/// One time-shifted listener's place in a station's archive: which file it reads, where, and what of it goes out. It
/// is given the bytes read at `readOffset` (`feed`) and hands out, unit by unit (`next`), what the listener is sent:
///
/// - **Ogg Opus**: one stream from the first file's header pages on. Each page is re-stamped by an `OggSplice` so
///   that the listener's stream goes on across files — its serial, page sequence and granules, from 0 at the moment
///   it starts — whatever each file's own numbering (each file's granules start at 0). A later file's header pages
///   are left out while its channels are the listener's; when they differ (the station's encoder changed), the
///   listener's stream ends and a new link begins with them. The end-of-stream flag a finished file's last page
///   carries is not passed on: it says `fileEnded`.
/// - **MP3**: the frames as they are.
///
/// It starts at the file and point `ArchiveIndex.locate` found, reads the headers from the file's start first (Ogg),
/// then skips the units that end at or before the moment asked for. A pure value over bytes (tests:
/// `ArchivePlayheadTests`); times are milliseconds since the epoch, UTC.
package struct ArchivePlayhead: Sendable {
    /// What `next` hands out.
    package enum Step: Sendable, Equatable {
        /// Bytes for the listener, with the seconds of audio they carry.
        case bytes([UInt8], seconds: Double)
        /// Bytes of the file from `readOffset` are needed (`feed`); the end of what is written so far when none come.
        case needsBytes
        /// The file is finished (its last page was read): the next one is `enter`ed.
        case endOfFile
        /// The file's bytes from here on are not the archive's (a torn or foreign write): go to the next file.
        case damaged
    }

    private enum Phase: Sendable {
        /// Reading the first file's header pages from its start; then on from `seek`.
        case headers(seek: Int64)
        /// A later file's header pages, carried through the splice.
        case nextHeaders
        /// Skipping units that end at or before `until`.
        case skipping(until: Int64)
        case playing
    }

    package let format: ArchiveName.Format
    /// The file being read, and the time its name says it starts.
    package private(set) var file: String
    package private(set) var fileStart: Int64
    /// The file's offset of the next bytes to `feed`.
    package private(set) var readOffset: Int64
    /// The file was read to its last page (Ogg: its end-of-stream flag).
    package private(set) var fileEnded = false
    /// Seconds of audio handed out.
    package private(set) var seconds = 0.0
    /// The archive time of the end of the audio handed out last.
    package private(set) var position: Int64
    private var phase: Phase
    /// Bytes fed and not yet handed out, from file offset `pendingStart`; `used` of them are read.
    private var pending: [UInt8] = []
    private var pendingStart: Int64
    private var used = 0
    /// The first file's header pages, while they are read (Ogg).
    private var headers: [[UInt8]] = []
    private var splice: OggSplice?
    /// This file's granule after the last page read (Ogg), or its seconds of frames (MP3), from its start.
    private var granule: Int64 = 0
    /// It went to a point inside the file: the granule before the first page read there is that page's granule
    /// less its samples (found at that page).
    private var seeked = false
    private var fileSeconds = 0.0

    /// The listener starts at `target` (ms since the epoch), found in the archive at `location`, in a file that
    /// starts at `fileStart` (its index entry's start).
    package init(location: ArchiveIndex.Location, fileStart: Int64, target: Int64, format: ArchiveName.Format) {
        self.format = format
        file = location.file
        self.fileStart = fileStart
        let from = max(target, location.time)
        position = from
        switch format {
        case .opus:
            readOffset = 0
            phase = location.offset > 0 ? .headers(seek: location.offset) : .headers(seek: 0)
        case .mp3:
            readOffset = location.offset
            fileSeconds = Double(max(0, location.time - fileStart)) / 1000
            phase = .skipping(until: from)
        }
        pendingStart = readOffset
    }

    /// The next bytes of the file, those at `readOffset`.
    package mutating func feed(_ bytes: some Collection<UInt8>) {
        if used > 0 {
            pending.removeFirst(used)
            pendingStart += Int64(used)
            used = 0
        }
        pending.append(contentsOf: bytes)
        readOffset += Int64(bytes.count)
    }

    /// Goes on with the file `name`, which starts at `start`, from its beginning (the one after the current one).
    package mutating func enter(file name: String, start: Int64) {
        file = name
        fileStart = start
        readOffset = 0
        pendingStart = 0
        pending = []
        used = 0
        granule = 0
        fileSeconds = 0
        fileEnded = false
        if format == .opus { phase = splice == nil ? .headers(seek: 0) : .nextHeaders }
    }

    /// What goes out next, or what is needed first.
    package mutating func next() -> Step {
        while true {
            if fileEnded { return .endOfFile }
            let unit = ArchiveUnit.find(in: pending, at: used, format: format)
            switch unit {
            case .needsMore: return .needsBytes
            case .damaged: return .damaged
            case .ogg(let length, let position, let flags):
                let offset = pendingStart + Int64(used)
                let page = Array(pending[used..<used + length])
                used += length
                if let step = ogg(page, at: offset, granule: position, flags: flags) { return step }
            case .mp3(let length, let samples, let rate):
                let duration = Double(samples) / Double(max(1, rate))
                fileSeconds += duration
                let end = fileStart &+ Int64((fileSeconds * 1000).rounded(.down))
                if case .skipping(let until) = phase {
                    guard end > until else {
                        used += length
                        continue
                    }
                    phase = .playing
                }
                let bytes = Array(pending[used..<used + length])
                used += length
                seconds += duration
                self.position = end
                return .bytes(bytes, seconds: duration)
            }
        }
    }

    /// One Ogg page read at `offset`: what goes out for it (nil: nothing, read on).
    private mutating func ogg(_ page: [UInt8], at offset: Int64, granule position: Int64, flags: UInt8) -> Step? {
        let isHeader = position == 0 && granule == 0
        switch phase {
        case .headers(let seek):
            if isHeader {
                headers.append(page)
                return headers.count > 16 ? .damaged : nil
            }
            guard !headers.isEmpty else { return .damaged }
            phase = .skipping(until: self.position)
            if seek > offset {
                // On from the point: the bytes before it are not read.
                seeked = true
                readOffset = seek
                pendingStart = seek
                pending = []
                used = 0
                return nil
            }
            return ogg(page, at: offset, granule: position, flags: flags)
        case .nextHeaders:
            guard isHeader else {
                phase = .playing
                return ogg(page, at: offset, granule: position, flags: flags)
            }
            guard var carried = splice else { return .damaged }
            let out = page.withUnsafeBytes { carried.carry($0, isHeader: true) }
            splice = carried
            return out.isEmpty ? nil : .bytes(out, seconds: 0)
        case .skipping(let until):
            if seeked, position >= 0 {
                seeked = false
                granule = max(0, position - ArchiveUnit.samples(ofOggPage: page))
            }
            let end = fileStart &+ max(0, position) / 48
            if position >= 0 && end <= until && flags & 4 == 0 {
                granule = max(granule, position)
                return nil
            }
            guard let first = headers.first, let last = headers.last else { return .damaged }
            let made = first.withUnsafeBytes { head in
                last.withUnsafeBytes { tags in OggSplice(lastPage: tags, headPage: head, base: granule) }
            }
            guard let made else { return .damaged }
            splice = made
            phase = .playing
            let start = headers.flatMap { $0 }
            headers = []
            guard case .bytes(let bytes, let seconds)? = ogg(page, at: offset, granule: position, flags: flags) else {
                return .bytes(start, seconds: 0)
            }
            return .bytes(start + bytes, seconds: seconds)
        case .playing:
            guard var carried = splice else { return .damaged }
            let out = page.withUnsafeBytes { carried.carry($0, isHeader: false) }
            splice = carried
            var duration = 0.0
            if position >= 0 {
                duration = Double(max(0, position - granule)) / 48_000
                granule = max(granule, position)
                self.position = fileStart &+ granule / 48
            }
            seconds += duration
            if flags & 4 != 0 { fileEnded = true }
            return .bytes(out, seconds: duration)
        }
    }
}
