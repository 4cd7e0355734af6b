import RadioRelaySystem

/// The index as it is kept on disk: a first line naming the format, then one line per file
/// (`F NAME START END SIZE`) followed by its points (`P TIME OFFSET`), times in ms since the epoch. Read back with
/// every line checked: a line out of place, a name not an archive file's, a point outside its file or out of order
/// makes the whole text unreadable (nil), and the writer then rebuilds the index by scanning the files.
extension ArchiveIndex {
    package static let textHeader = "radio-relay-archive-index 1"

    package var text: String {
        var out = Self.textHeader + "\n"
        for file in files {
            out += "F \(file.name) \(file.start) \(file.end) \(file.size)\n"
            for point in file.points { out += "P \(point.time) \(point.offset)\n" }
        }
        return out
    }

    /// The index in `text`; nil when it is damaged in any way.
    package init?(text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(Self.textHeader), lines.last == "" else { return nil }
        lines.removeFirst()
        lines.removeLast()
        var files: [File] = []
        for line in lines {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            switch fields.first {
            case "F":
                guard fields.count == 5, let parsed = ArchiveName.parse(String(fields[1])),
                    let start = Int64(fields[2]), start > parsed.start - ArchiveScanner.maxAnchorShift,
                    let end = Int64(fields[3]), end >= start,
                    let size = Int64(fields[4]), size >= 0,
                    files.last.map({ $0.start <= start && $0.name != String(fields[1]) }) ?? true
                else { return nil }
                files.append(File(name: String(fields[1]), start: start, end: end, size: size, points: []))
            case "P":
                guard fields.count == 3, let time = Int64(fields[1]), let offset = Int64(fields[2]),
                    let file = files.last, time >= file.start, time <= file.end, offset >= 0,
                    offset < max(1, file.size),
                    file.points.last.map({ $0.time <= time && $0.offset < offset }) ?? (offset == 0)
                else { return nil }
                files[files.count - 1].points.append(Point(time: time, offset: offset))
            default:
                return nil
            }
        }
        self.init(files: files)
    }
}
