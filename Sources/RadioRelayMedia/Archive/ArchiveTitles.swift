import RadioRelaySystem

/// The titles an archive holds: each title change of the station (its song history's entries) with its time, kept
/// beside the audio files in `titles.txt` so that `/NAME/archive.json` and the station page can start a listener at a
/// song. A pure value (tests: `ArchiveTitlesTests`); times are milliseconds since the epoch, UTC.
///
/// On disk, one line per title, `MILLIS<TAB>INPUT<TAB>DJ<TAB>TITLE` (DJ empty when none). A title comes from a source
/// or an upstream, so nothing of it is trusted: tabs, line breaks and other control characters become spaces (by
/// Unicode scalars) and each field is cut to `fieldLimit` bytes on a scalar boundary; read back, a line that does not
/// parse is skipped, times must not go back, and at most `limit` are kept.
package struct ArchiveTitles: Sendable, Equatable {
    package struct Entry: Sendable, Equatable {
        package var time: Int64
        package var title: String
        package var input: String
        package var dj: String?

        package init(time: Int64, title: String, input: String, dj: String? = nil) {
            self.time = time
            self.title = ArchiveTitles.clean(title)
            self.input = ArchiveTitles.clean(input)
            self.dj = dj.map(ArchiveTitles.clean)
        }
    }

    /// The most titles kept (about a week of 4-minute songs and then some).
    package static let limit = 10_000
    package static let fieldLimit = 512
    /// The file's name in the archive's folder, and the most of it read back.
    package static let fileName = "titles.txt"
    package static let readLimit = 8 << 20

    /// Oldest first.
    package private(set) var entries: [Entry] = []

    package init() {}

    /// Adds a title change; one earlier than the last kept, or the same title again, is not one.
    package mutating func append(_ entry: Entry) {
        guard !entry.title.isEmpty else { return }
        if let last = entries.last, last.time > entry.time || last.title == entry.title { return }
        entries.append(entry)
        if entries.count > Self.limit { entries.removeFirst(entries.count - Self.limit) }
    }

    /// Forgets the titles that ended before `time` (the archive's oldest audio): the one playing at `time` stays.
    package mutating func prune(before time: Int64) {
        guard let playing = entries.lastIndex(where: { $0.time <= time }), playing > 0 else { return }
        entries.removeFirst(playing)
    }

    /// The title playing at `time` and those after it, to `end`, oldest first.
    package func between(_ time: Int64, _ end: Int64) -> ArraySlice<Entry> {
        let first = entries.lastIndex { $0.time <= time } ?? entries.startIndex
        let last = entries.firstIndex { $0.time >= end } ?? entries.endIndex
        return first < last ? entries[first..<last] : []
    }

    /// One entry's line, with its line feed.
    package static func line(_ entry: Entry) -> String {
        "\(entry.time)\t\(entry.input)\t\(entry.dj ?? "")\t\(entry.title)\n"
    }

    package var text: String { entries.map(Self.line).joined() }

    /// The titles of a file's text (lines that do not parse skipped).
    package init(text: Substring) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, let time = Int64(fields[0]), time >= 0 else { continue }
            append(
                Entry(
                    time: time, title: String(fields[3]), input: String(fields[1]),
                    dj: fields[2].isEmpty ? nil : String(fields[2])))
        }
    }

    /// `text` with control characters as spaces, cut to `fieldLimit` bytes at a scalar's end.
    package static func clean(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            let kept: Unicode.Scalar = scalar.properties.generalCategory == .control ? " " : scalar
            bytes += String(kept).utf8.count
            if bytes > fieldLimit { break }
            out.append(kept)
        }
        return String(out)
    }
}
