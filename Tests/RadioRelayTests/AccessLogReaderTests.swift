import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Reading access log files for a report: plain and gzip told apart by their bytes, rotated files in any order and
/// overlapping, files cut short or corrupt, endless lines and gzip bombs — bounded, and every line accounted for.
@Suite struct AccessLogReaderTests {
    static func write(_ bytes: [UInt8], _ path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func text(_ lines: some Sequence<String>) -> [UInt8] { Array(lines.map { $0 + "\n" }.joined().utf8) }

    /// What identifies a kept line, to compare two sets of lines in any order.
    static func summary(_ lines: [ListenedLine]) -> [String] {
        lines.map { "\($0.mount) \($0.leave) \($0.seconds) \(String(describing: $0.session)) \($0.isEdge)" }.sorted()
    }

    /// Four rotated files — gzip, a plain file called .gz, gzip called .1 (two members), the live plain file — given
    /// newest first, the .1 overlapping the live file by 25 lines: every line once, and the report's figures those
    /// of the audience.
    @Test func plainAndGzipRotatedFilesInAnyOrderOverlappingOnce() throws {
        let directory = temporaryPath("report")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let audience = SyntheticAudience(seed: 11, count: 300, from: 1_796_169_600, days: 2)
        let lines = audience.lines().map(\.text)
        let quarter = lines.count / 4
        let parts = (0..<4).map { Array(lines[($0 * quarter)..<($0 == 3 ? lines.count : ($0 + 1) * quarter)]) }
        try Self.write(GzipWriter.compress(Self.text(parts[0])), directory + "/access.log.3.gz")
        try Self.write(Self.text(parts[1]), directory + "/access.log.2.gz")
        let third = parts[2] + parts[3].prefix(25)
        let half = third.count / 2
        try Self.write(
            GzipWriter.compress(Self.text(third[..<half])) + GzipWriter.compress(Self.text(third[half...])),
            directory + "/access.log.1")
        try Self.write(Self.text(parts[3]), directory + "/access.log")

        var tally = AccessLogTally()
        var notes: [String] = []
        for name in ["access.log", "access.log.1", "access.log.3.gz", "access.log.2.gz"] {
            notes += try AccessLogReader().read(directory + "/" + name, into: &tally)
        }
        #expect(notes.isEmpty)
        #expect(tally.counts.lines == lines.count + 25 && tally.counts.duplicates == 25)
        #expect(tally.counts.unreadable == 0 && tally.examples.isEmpty)
        #expect(Self.summary(tally.lines) == Self.summary(try ListeningReportTests.lines(audience)))
        let report = ListeningReport(lines: tally.lines)
        let expected = audience.expected(minSeconds: 5)
        #expect(ListeningReportTests.figures(report.total) == expected.total)
        for row in report.groups { #expect(ListeningReportTests.figures(row) == expected.rows[row.name]) }
        // The same files twice: every line a duplicate.
        let before = tally.counts.duplicates
        _ = try AccessLogReader().read(directory + "/access.log", into: &tally)
        #expect(tally.counts.duplicates == before + parts[3].count && tally.lines.count == lines.count)
    }

    /// Broken files: gzip cut short or corrupt (the lines before count, with a note), a line beyond the limit and a
    /// last line without its LF (unreadable), files that cannot be read (an error).
    @Test func brokenFilesAreCountedAndNoted() throws {
        let directory = temporaryPath("report-broken")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lines = SyntheticAudience(seed: 12, count: 400, from: 1_796_169_600, days: 1).lines().map(\.text)
        let gzip = GzipWriter.compress(Self.text(lines))
        try Self.write(Array(gzip.prefix(gzip.count / 2)), directory + "/cut.gz")
        var corrupt = gzip
        for index in stride(from: gzip.count / 2, to: gzip.count / 2 + 64, by: 1) { corrupt[index] ^= 0x5A }
        try Self.write(corrupt, directory + "/corrupt.gz")
        let long = String(repeating: "y", count: 40_000)
        try Self.write(
            Array((lines[0] + "\n" + long + "\n" + lines[1] + "\n" + lines[2].prefix(50)).utf8), directory + "/plain")

        var cut = AccessLogTally()
        let cutNotes = try AccessLogReader().read(directory + "/cut.gz", into: &cut)
        #expect(cutNotes.count == 1 && cutNotes[0].contains("cut short"), "\(cutNotes)")
        #expect(cut.lines.count > 100 && cut.lines.count < lines.count && cut.counts.unreadable <= 1)

        var bad = AccessLogTally()
        let badNotes = try AccessLogReader().read(directory + "/corrupt.gz", into: &bad)
        #expect(badNotes.count == 1 && badNotes[0].contains("corrupt"), "\(badNotes)")
        #expect(bad.lines.count > 100 && bad.lines.count < lines.count)

        var plain = AccessLogTally()
        #expect(try AccessLogReader().read(directory + "/plain", into: &plain).isEmpty)
        #expect(plain.lines.count == 2 && plain.counts.unreadable == 2 && plain.counts.lines == 4)
        #expect(
            plain.examples == [
                "\(directory)/plain:2: longer than the limit of a line",
                "\(directory)/plain:4: cut short (no LF at the end of the file)",
            ])

        var none = AccessLogTally()
        #expect(throws: AccessLogReader.Failure.self) {
            try AccessLogReader().read(directory + "/missing.log", into: &none)
        }
        do {
            _ = try AccessLogReader().read(directory, into: &none)
            Issue.record("a directory was read")
        } catch {
            #expect(error.message.hasPrefix("cannot read \(directory): "))
        }
        #expect(none.counts == AccessLogTally.Counts())
    }

    /// A gzip bomb — a few KB that inflate to far more — is read to the text limit and no further, a line at a
    /// time: a bomb of zeros is one endless line, skipped; a bomb of LFs is that many empty lines.
    @Test func aGzipBombStopsAtTheTextLimit() throws {
        let directory = temporaryPath("report-bomb")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        let bomb = GzipWriter.compress(level: 9) { feed in for _ in 0..<64 { feed(zeros) } }
        #expect(bomb.count < 100_000)
        try Self.write(bomb, directory + "/bomb.log")
        var reader = AccessLogReader()
        reader.textLimit = 8 << 20
        var tally = AccessLogTally()
        let notes = try reader.read(directory + "/bomb.log", into: &tally)
        #expect(notes == ["\(directory)/bomb.log: stopped after 8388608 bytes of text, the limit of a file"])
        #expect(tally.counts == AccessLogTally.Counts())

        let newlines = GzipWriter.compress(level: 9) { feed in
            for _ in 0..<16 { feed([UInt8](repeating: 0x0A, count: 1 << 20)) }
        }
        try Self.write(newlines, directory + "/lines.log.gz")
        reader.textLimit = 300_000
        var empty = AccessLogTally()
        #expect(try reader.read(directory + "/lines.log.gz", into: &empty).count == 1)
        #expect(empty.counts.lines == 300_000 && empty.counts.comments == 300_000)
        #expect(AccessLogReader.defaultTextLimit == 4 << 30 && AccessLogReader.defaultLineLimit == 16 * 1024)
    }

    /// The tally's bounds: lines beyond its limit are counted, not kept; mounts beyond its limit share one row; what
    /// it keeps of a line is 64 bytes, and its key against duplicates 16.
    @Test func theTallyIsBounded() {
        #expect(MemoryLayout<ListenedLine>.stride == 64 && MemoryLayout<LineKey>.stride == 16)
        var tally = AccessLogTally(limit: 3)
        for id in 1...5 {
            let line = "h 5f3a09c1-\(id) - [02/Dec/2026:16:03:08 +0000] \"TCP /m\(id)\" 200 1 \"-\" \"-\" 30"
            tally.add(Array(line.utf8)[...], file: "f", number: id)
        }
        #expect(tally.lines.count == 3 && tally.counts.overLimit == 2)
        var mounts = AccessLogTally()
        for id in 1...(AccessLogTally.mountLimit + 2) {
            let line = "h 5f3a09c1-\(id) - [02/Dec/2026:16:03:08 +0000] \"TCP /m\(id)\" 200 1 \"-\" \"-\" 30"
            mounts.add(Array(line.utf8)[...], file: "f", number: id)
        }
        #expect(Set(mounts.lines.map(\.mount)).count == AccessLogTally.mountLimit + 1)
        #expect(mounts.lines.filter { $0.mount == AccessLogTally.otherMounts }.count == 2)
    }
}
