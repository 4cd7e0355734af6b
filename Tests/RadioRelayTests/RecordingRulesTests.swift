import Testing

@testable import RadioRelayMedia

/// The rules of the recordings of live shows as values: a show's name made safe from what a source client says
/// (hostile header values included), a recording's file name, the source copy's extension, where a long show's file
/// is split, and which page ends a show after its hand-back (on granules: 48 kHz samples, no clock).
@Suite struct RecordingRulesTests {
    static let eight = ArchiveRulesTests.eight

    @Test func showNamesAreSafeForAnyFileSystemAndShell() {
        #expect(RecordingName.safe("Morning Show") == "Morning-Show")
        #expect(RecordingName.safe("DJ_Alice-2") == "DJ_Alice-2")
        #expect(RecordingName.safe("../../etc/passwd") == "etc-passwd", "no path leaves the folder")
        #expect(RecordingName.safe("/abs/path") == "abs-path")
        #expect(RecordingName.safe("a\u{0}b\r\nc\td") == "a-b-c-d", "controls")
        #expect(RecordingName.safe("$(rm -rf ~); `x` 'y' \"z\" *?") == "rm-rf-x-y-z", "shell syntax")
        #expect(RecordingName.safe(".hidden") == "hidden", "no dot file")
        #expect(RecordingName.safe("Café Müller") == "Caf-M-ller", "other letters are separators")
        #expect(RecordingName.safe("Ночной эфир") == "", "nothing left")
        #expect(RecordingName.safe("e\u{301}") == "e", "a combining mark is a scalar of its own")
        #expect(RecordingName.safe("---") == "")
        let long = String(repeating: "ab ", count: 100)
        let safe = RecordingName.safe(long)
        #expect(safe.utf8.count <= RecordingName.maxShowLength && safe.hasPrefix("ab-ab") && !safe.hasSuffix("-"))
        #expect(RecordingName.safe(String(repeating: "x", count: 100_000)).utf8.count == 64, "bounded")
        #expect(RecordingName.safe(String(repeating: "é", count: 100_000) + "tail") == "", "bounded work")
    }

    @Test func theShowIsNamedByItsIceNameElseItsDJElseItsTitle() {
        #expect(RecordingName.show(["Morning Show", "alice", "Artist - Title"]) == "Morning-Show")
        #expect(RecordingName.show([nil, "alice", "Artist - Title"]) == "alice")
        #expect(RecordingName.show(["///", nil, "Artist - Title"]) == "Artist-Title", "an empty name is skipped")
        #expect(RecordingName.show([nil, nil, nil]) == "live")
        #expect(RecordingName.show(["Ночь", nil, nil]) == "live")
    }

    @Test func aRecordingIsNamedByItsUTCStartAndItsShow() {
        #expect(
            RecordingName.name(start: Self.eight + 999, show: "Morning-Show", ext: "opus")
                == "2026-12-05T08-00-00Z_Morning-Show.opus")
        #expect(RecordingName.name(start: Self.eight, show: "live", ext: "mp3") == "2026-12-05T08-00-00Z_live.mp3")
        #expect(ArchiveName.parse("2026-12-05T08-00-00Z_live.opus") == nil, "never taken for an archive file")
        #expect(RecordingName.sourceExtension(Array("OggS\0\u{2}".utf8)) == "ogg")
        #expect(RecordingName.sourceExtension([0xFF, 0xFB, 0x90, 0x64]) == "mp3")
        #expect(RecordingName.sourceExtension(Array("ID3".utf8)) == "mp3")
        #expect(RecordingName.sourceExtension([UInt8]()) == "mp3")
    }

    @Test func aLongShowIsSplitOnceAFileHoldsTheMaximumAtAPageThatStartsClean() {
        var settings = RecordingSettings()
        #expect(settings.maxSeconds == 14_400 && settings.directory == nil && !settings.keepsSource)
        #expect(RecordingSettings.maxRange == 60...86_400)
        let four = Int64(14_400 * 48_000)
        #expect(!settings.splits(samples: four - 1, continued: false))
        #expect(settings.splits(samples: four, continued: false))
        #expect(!settings.splits(samples: four + 48_000, continued: true), "never inside a packet")
        settings.maxSeconds = 60
        #expect(settings.splits(samples: 60 * 48_000, continued: false))
        #expect(!settings.splits(samples: 0, continued: false))
        #expect(!settings.splits(samples: -1, continued: false))
    }

    @Test func aShowEndsAtTheFirstPageThatCarriesTheLastOfItsAudio() {
        var span = LiveShowSpan()
        #expect(span.end == nil && !span.isLast(granule: .max - 1), "on the air: no page is the last")
        span.handBack(granule: 96_000, tail: 0.5)
        #expect(span.end == Int64(120_000))
        #expect(!span.isLast(granule: 96_000 + 23_999))
        #expect(span.isLast(granule: 96_000 + 24_000) && span.isLast(granule: 200_000))
        #expect(!span.isLast(granule: -1), "a page on which no packet ends")
        span.handBack(granule: 1_000, tail: .infinity)
        #expect(span.end == 1_000, "no tail from a broken figure")
        span.handBack(granule: 1_000, tail: 3_600)
        #expect(span.end == Int64(2_881_000), "a tail of at most a minute")
        span.handBack(granule: 1_000, tail: -2)
        #expect(span.end == 1_000)
    }
}
