import Testing

@testable import RadioRelayMedia

/// The archive's rules as values on given times: where a file ends (the UTC clock's boundaries), which names a file
/// gets and which names are archive files, what `archive_keep` accepts and which files it removes, and when a volume
/// counts as nearly full.
@Suite struct ArchiveRulesTests {
    /// 2026-12-05T08:00:00Z in ms.
    static let eight: Int64 = 1_796_457_600_000

    @Test func filesEndOnTheBoundariesOfTheUTCClock() {
        var settings = ArchiveSettings()
        #expect(settings.span == 600)
        #expect(settings.boundary(after: Self.eight) == Self.eight + 600_000, "a page at the boundary starts a file")
        #expect(settings.boundary(after: Self.eight - 1) == Self.eight)
        #expect(settings.boundary(after: Self.eight + 197_000) == Self.eight + 600_000)
        #expect(settings.spanStart(of: Self.eight + 197_000) == Self.eight)
        settings.span = 3600
        #expect(settings.boundary(after: Self.eight + 1) == Self.eight + 3_600_000)
        settings.span = 10
        #expect(settings.boundary(after: Self.eight + 9_999) == Self.eight + 10_000)
        #expect(settings.spanStart(of: Self.eight + 10_000) == Self.eight + 10_000)
        #expect(settings.boundary(after: .max - 5) == .max, "no overflow")
        #expect(ArchiveSettings.isSpan(600) && ArchiveSettings.isSpan(10) && ArchiveSettings.isSpan(86_400))
        #expect(!ArchiveSettings.isSpan(7) && !ArchiveSettings.isSpan(700) && !ArchiveSettings.isSpan(172_800))
    }

    @Test func namesAreTheUTCStartAndReadBack() throws {
        #expect(ArchiveName.name(start: Self.eight, format: .opus) == "2026-12-05T08-00-00Z.opus")
        #expect(ArchiveName.name(start: Self.eight + 197_999, format: .mp3) == "2026-12-05T08-03-17Z.mp3")
        let parsed = try #require(ArchiveName.parse("2026-12-05T08-03-17Z.mp3"))
        #expect(parsed.start == Self.eight + 197_000 && parsed.format == .mp3)
        for name in [
            "index.txt", "2026-12-05T08-00-00Z.ogg", "2026-02-30T08-00-00Z.opus", "2026-12-05T24-00-00Z.opus",
            "2026-12-05T08:00:00Z.opus", "2026-12-05T08-00-00Z.opus.tmp", "x026-12-05T08-00-00Z.opus", "",
            "1969-12-31T23-59-59Z.opus", "2026-12-05T08-00-0Z.opus",
        ] {
            #expect(ArchiveName.parse(name) == nil, "\(name)")
        }
    }

    @Test func keepReadsDurationsSizesAndBoth() throws {
        #expect(ArchiveKeep(parsing: "7d") == ArchiveKeep(seconds: 604_800))
        #expect(ArchiveKeep(parsing: "12h") == ArchiveKeep(seconds: 43_200))
        #expect(ArchiveKeep(parsing: "90m") == ArchiveKeep(seconds: 5_400))
        #expect(ArchiveKeep(parsing: "30s") == ArchiveKeep(seconds: 30))
        #expect(ArchiveKeep(parsing: "20G") == ArchiveKeep(bytes: 20 << 30))
        #expect(ArchiveKeep(parsing: "512M") == ArchiveKeep(bytes: 512 << 20))
        #expect(ArchiveKeep(parsing: "7d 50G") == ArchiveKeep(seconds: 604_800, bytes: 50 << 30))
        #expect(ArchiveKeep(parsing: "50G\t7d") == ArchiveKeep(seconds: 604_800, bytes: 50 << 30))
        #expect(ArchiveKeep(parsing: "none") == ArchiveKeep())
        for text in [
            "", "7", "d", "7x", "-7d", "0d", "7d 8d", "1G 2G", "7d 1G 2h", "7.5d", "99999999999999999d", "4000T",
            "3651d", "7D", "7 d", "none 7d",
        ] {
            #expect(ArchiveKeep(parsing: text) == nil, "\(text)")
        }
    }

    static func file(_ minute: Int64, size: Int64 = 1000, minutes: Int64 = 10) -> ArchiveIndex.File {
        let start = eight + minute * 60_000
        return ArchiveIndex.File(
            name: ArchiveName.name(start: start, format: .opus), start: start, end: start + minutes * 60_000,
            size: size, points: [ArchiveIndex.Point(time: start, offset: 0)])
    }

    @Test func keepRemovesFilesWhollyOlderThanItsAge() {
        let files = (0..<6).map { Self.file(Int64($0) * 10) }  // 08:00 … 08:50, each 10 min
        let keep = ArchiveKeep(seconds: 1_800)
        // At 09:00: the files that ended at or before 08:30 go (08:00, 08:10, 08:20).
        let now = Self.eight + 60 * 60_000
        #expect(keep.removals(files, current: files[5].name, now: now) == files[0..<3].map(\.name))
        // One millisecond earlier, 08:20's file still holds audio younger than 30 minutes.
        #expect(keep.removals(files, current: nil, now: now - 1) == files[0..<2].map(\.name))
        #expect(ArchiveKeep().removals(files, current: nil, now: .max) == [], "no limit: nothing goes")
    }

    @Test func keepRemovesTheOldestBeyondItsSizeButNeverTheCurrentFile() {
        let files = (0..<5).map { Self.file(Int64($0) * 10, size: 400) }  // 2000 bytes
        #expect(ArchiveKeep(bytes: 1000).removals(files, current: files[4].name, now: 0) == files[0..<3].map(\.name))
        #expect(ArchiveKeep(bytes: 2000).removals(files, current: nil, now: 0) == [])
        // The current file alone is larger than the keep: it stays; everything else goes.
        let big = [Self.file(0, size: 400), Self.file(10, size: 5000)]
        #expect(ArchiveKeep(bytes: 1000).removals(big, current: big[1].name, now: 0) == [big[0].name])
        // Both limits: each removes what it removes.
        let both = ArchiveKeep(seconds: 1_800, bytes: 1000)
        #expect(both.removals(files, current: nil, now: Self.eight + 40 * 60_000) == files[0..<3].map(\.name))
        #expect(both.removals(files, current: nil, now: Self.eight + 70 * 60_000) == files[0..<4].map(\.name))
    }

    @Test func aVolumeIsNearlyFullBelowOnePercentWithinBounds() {
        #expect(ArchiveSettings.reserve(total: 100 << 30) == 1 << 30, "1 GiB at most")
        #expect(ArchiveSettings.reserve(total: 10 << 30) == (10 << 30) / 100)
        #expect(ArchiveSettings.reserve(total: 16 << 20) == 1 << 20, "1 MiB at least")
        #expect(ArchiveSettings.isNearlyFull(available: (1 << 30) - 1, total: 1 << 40))
        #expect(!ArchiveSettings.isNearlyFull(available: 1 << 30, total: 1 << 40))
        #expect(ArchiveSettings.isNearlyFull(available: 0, total: 0))
    }
}
