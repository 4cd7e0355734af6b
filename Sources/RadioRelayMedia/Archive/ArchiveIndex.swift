import RadioRelaySystem

/// Where an archive's audio is: its files in time order, each with its UTC start and end and, every
/// `pointInterval`, the byte offset of a page (an MP3 frame) that starts there, so that a reader can start near any
/// moment without reading the file from its start. A time no file covers is a gap (the writer dropped pages, the
/// disk failed, the server was down): `locate` skips it to the next file.
///
/// Built by scanning the files' bytes (`ArchiveScanner`): the writer feeds it what it writes, a restart what it
/// finds, so the index a writer keeps and the one a scan rebuilds are the same. Kept on disk beside the files as
/// text (`text`, `init(text:)`), one line per file and per point. A pure value (tests: `ArchiveIndexTests`); times
/// are milliseconds since the Unix epoch, UTC.
package struct ArchiveIndex: Sendable, Equatable {
    /// A place in a file where a page (a frame) starts, and the time of its first sample.
    package struct Point: Sendable, Equatable {
        package var time: Int64
        package var offset: Int64
    }

    /// One file: the time its first page starts (when it was published, to the millisecond: its name has the second,
    /// and a scan of a file found on disk only that) and its last ends, its size (whole pages only),
    /// and its points; the first point is the file's start, offset 0 (a reader starts there with the headers).
    package struct File: Sendable, Equatable {
        package var name: String
        package var start: Int64
        package var end: Int64
        package var size: Int64
        package var points: [Point]
    }

    /// Where a reader starts for a time: the file, the offset of the page, that page's time, and whether the time
    /// asked for was in a gap (the reader starts at the next file's start instead).
    package struct Location: Sendable, Equatable {
        package var file: String
        package var offset: Int64
        package var time: Int64
        package var skippedGap: Bool
    }

    /// A point every 10 s of audio.
    package static let pointInterval: Int64 = 10_000

    /// Oldest first.
    package private(set) var files: [File] = []

    package init(files: [File] = []) {
        self.files = files.sorted { $0.start < $1.start || ($0.start == $1.start && $0.name < $1.name) }
    }

    /// Adds `file`, or replaces the one of the same name, keeping the time order.
    package mutating func insert(_ file: File) {
        files.removeAll { $0.name == file.name }
        let index = files.firstIndex { $0.start > file.start } ?? files.endIndex
        files.insert(file, at: index)
    }

    package mutating func remove(_ name: String) { files.removeAll { $0.name == name } }

    package func file(named name: String) -> File? { files.first { $0.name == name } }

    /// Bytes of all the files.
    package var bytes: Int64 { files.reduce(0) { $0 &+ $1.size } }

    /// From the first file's start to the last one's end; nil when there is no file.
    package var range: ClosedRange<Int64>? {
        guard let first = files.first, let last = files.last, first.start <= last.end else { return nil }
        return first.start...last.end
    }

    /// A file's start is the second its name says, up to a second before its first page: a shorter space between
    /// two files is no gap.
    package static let gapTolerance: Int64 = 1_000

    /// The times no file covers between the first and the last file, in order (those over `gapTolerance`).
    package var gaps: [Range<Int64>] {
        var gaps: [Range<Int64>] = []
        var reached = files.first?.end ?? 0
        for file in files.dropFirst() {
            if file.start > reached + Self.gapTolerance { gaps.append(reached..<file.start) }
            reached = max(reached, file.end)
        }
        return gaps
    }

    /// Where to start for `time`: the last point at or before it in the file that covers it; in a gap, the next
    /// file's start. Nil before the first file and at or after the last one's end.
    package func locate(_ time: Int64) -> Location? {
        guard let range, range.contains(time), time < range.upperBound else { return nil }
        // The last file that starts at or before `time` (binary search: an archive of a year has 50 000 files).
        var low = 0
        var high = files.count
        while low < high {
            let middle = (low + high) / 2
            if files[middle].start <= time { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let file = files[low - 1]
        guard time < file.end else {
            guard low < files.count else { return nil }
            let next = files[low]
            return Location(file: next.name, offset: 0, time: next.start, skippedGap: true)
        }
        let point = file.points.last { $0.time <= time } ?? Point(time: file.start, offset: 0)
        return Location(file: file.name, offset: point.offset, time: point.time, skippedGap: false)
    }
}
