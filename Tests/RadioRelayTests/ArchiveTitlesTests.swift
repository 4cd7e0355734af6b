import Foundation
import RadioRelayNet
import RadioRelaySystem
import Testing

@testable import RadioRelayMedia

/// The titles kept beside an archive: in order, each change once, hostile text made safe for their file (by Unicode
/// scalars), read back from a damaged file line by line, pruned with the files; and `archive.json` and the page's
/// "listen again" built from them.
@Suite struct ArchiveTitlesTests {
    static let eight = ArchiveRulesTests.eight

    @Test func titlesAreKeptInOrderOnceEach() {
        var titles = ArchiveTitles()
        titles.append(.init(time: Self.eight, title: "A", input: "1"))
        titles.append(.init(time: Self.eight + 1, title: "A", input: "1"))  // the same again
        titles.append(.init(time: Self.eight - 5, title: "B", input: "1"))  // back in time
        titles.append(.init(time: Self.eight + 60_000, title: "", input: "1"))  // no title
        titles.append(.init(time: Self.eight + 60_000, title: "C", input: "live", dj: "carol"))
        #expect(titles.entries.map(\.title) == ["A", "C"])
        #expect(titles.between(Self.eight + 30_000, Self.eight + 90_000).map(\.title) == ["A", "C"])
        #expect(titles.between(Self.eight + 60_000, Self.eight + 90_000).map(\.title) == ["C"])
        var pruned = titles
        pruned.prune(before: Self.eight + 30_000)
        #expect(pruned.entries.map(\.title) == ["A", "C"], "the one playing at the oldest audio stays")
        pruned.prune(before: Self.eight + 70_000)
        #expect(pruned.entries.map(\.title) == ["C"])
    }

    @Test func hostileTextIsMadeSafeAndTheFileReadsBack() {
        let hostile = "a\tb\nc\r\u{0}d\u{1B}[31m\u{85}é🎵" + String(repeating: "x", count: 600)
        var titles = ArchiveTitles()
        titles.append(.init(time: 5, title: hostile, input: "in\tput", dj: "d\nj"))
        let entry = titles.entries[0]
        #expect(!entry.title.unicodeScalars.contains { $0.properties.generalCategory == .control })
        #expect(entry.title.hasPrefix("a b c  d [31m é🎵") && entry.title.utf8.count <= ArchiveTitles.fieldLimit)
        #expect(entry.input == "in put" && entry.dj == "d j")
        let text = titles.text
        #expect(text.split(separator: "\n").count == 1)
        #expect(ArchiveTitles(text: Substring(text)) == titles)
        // A damaged file: lines that do not parse are skipped, the others kept.
        let damaged = "garbage\n7\tx\n-3\t1\t\tneg\n" + text + "12\t1\t\tlater\n\u{FFFD}\t\t\n"
        #expect(ArchiveTitles(text: Substring(damaged)).entries.map(\.title) == [entry.title, "later"])
    }

    @Test func theListingIsJSONWithItsURLsAndShows() throws {
        var titles = ArchiveTitles()
        titles.append(.init(time: Self.eight - 30_000, title: "Before \"it\"", input: "1"))
        titles.append(.init(time: Self.eight + 10_250, title: "</script><b>x", input: "live", dj: "carol"))
        titles.append(.init(time: Self.eight + 20_000, title: "Two", input: "live", dj: "carol"))
        titles.append(.init(time: Self.eight + 40_000, title: "Three", input: "live", dj: "dave"))
        let index = ArchiveIndex(files: [
            .init(
                name: ArchiveName.name(start: Self.eight, format: .opus), start: Self.eight, end: Self.eight + 60_000,
                size: 1000, points: [])
        ])
        let text = ArchiveListing.json(station: "main", mount: "/main.opus", index: index, titles: titles)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(json["oldest"] as? String == "2026-12-05T08:00:00Z")
        let listed = try #require(json["titles"] as? [[String: Any]])
        #expect(listed.map { $0["title"] as? String } == ["Three", "Two", "</script><b>x", "Before \"it\""])
        #expect(listed[2]["listen"] as? String == "/main.opus?start=2026-12-05T08:00:10.250Z")
        // The song playing when the archive starts plays from the archive's start.
        #expect(listed[3]["listen"] as? String == "/main.opus?start=2026-12-05T08:00:00Z")
        let shows = ArchiveListing.shows(titles, range: Self.eight...(Self.eight + 60_000))
        #expect(shows.map(\.dj) == ["dave", "carol"] && shows.last?.start == Self.eight + 10_250)
    }
}
