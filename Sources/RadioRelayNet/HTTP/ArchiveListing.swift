import RadioRelayMedia
import RadioRelaySystem

/// `/NAME/archive.json`: what a station's archive holds, for a catch-up page or an app — its range, its files and
/// gaps, and its titles, each with the URL that plays from its start (`?start=`), newest first. Built from the
/// writer's published index and titles (memory only: no disk read on the HTTP thread), at most `limit` files and
/// titles. Also the "listen again" parts of the station page and `history.json` (`listen`, `shows`).
package enum ArchiveListing {
    package static let limit = 500
    package static let gapLimit = 100

    /// The URL that plays `mount` from `millis`.
    package static func listen(_ mount: String, from millis: Int64) -> String {
        "\(mount)?start=\(iso(millis))"
    }

    /// `2026-12-05T08:00:00.250Z`, or without the fraction when it is 0.
    package static func iso(_ millis: Int64) -> String {
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let text = UTCTime(Double(seconds)).iso8601
        let fraction = millis - seconds * 1000
        guard fraction > 0 else { return String(text.prefix(19)) + "Z" }
        let digits = String(fraction + 1000).dropFirst()
        return String(text.prefix(19)) + "." + digits + "Z"
    }

    /// The answer for `station`'s archive, served by `mount`.
    package static func json(station: String, mount: String, index: ArchiveIndex, titles: ArchiveTitles) -> String {
        let range = index.range
        let files = index.files.suffix(limit).reversed().map { file in
            JSONText.object([
                ("name", JSONText.string(file.name)), ("start", JSONText.string(iso(file.start))),
                ("end", JSONText.string(iso(file.end))), ("bytes", JSONText.number(Int(clamping: file.size))),
                ("listen", JSONText.string(listen(mount, from: file.start))),
            ])
        }
        let gaps = index.gaps.suffix(gapLimit).reversed().map { gap in
            JSONText.object([
                ("from", JSONText.string(iso(gap.lowerBound))), ("to", JSONText.string(iso(gap.upperBound))),
            ])
        }
        let held = range.map { titles.between($0.lowerBound, $0.upperBound) } ?? []
        let listed = held.suffix(limit).reversed().map { entry in
            let from = max(entry.time, range?.lowerBound ?? entry.time)
            return JSONText.object(
                [
                    ("title", JSONText.string(entry.title)), ("started", JSONText.string(iso(entry.time))),
                    ("input", JSONText.string(entry.input)),
                ] + (entry.dj.map { [("dj", JSONText.string($0))] } ?? []) + [
                    ("listen", JSONText.string(listen(mount, from: from)))
                ])
        }
        return JSONText.object([
            ("station", JSONText.string(station)), ("mount", JSONText.string(mount)),
            ("oldest", JSONText.string(range.map { iso($0.lowerBound) })),
            ("newest", JSONText.string(range.map { iso($0.upperBound) })),
            ("files", JSONText.array(Array(files))), ("file_count", JSONText.number(index.files.count)),
            ("gaps", JSONText.array(Array(gaps))), ("titles", JSONText.array(Array(listed))),
        ]) + "\n"
    }

    /// The last DJ sets the archive holds (a run of titles in one DJ's set), newest first, at most `count`: the
    /// station page's "Listen again".
    package static func shows(_ titles: ArchiveTitles, range: ClosedRange<Int64>, count: Int = 10) -> [(
        dj: String, start: Int64
    )] {
        var shows: [(dj: String, start: Int64)] = []
        var current: String?
        for entry in titles.between(range.lowerBound, range.upperBound) {
            if let dj = entry.dj, dj != current { shows.append((dj, max(entry.time, range.lowerBound))) }
            current = entry.dj
        }
        return Array(shows.suffix(count).reversed())
    }
}
