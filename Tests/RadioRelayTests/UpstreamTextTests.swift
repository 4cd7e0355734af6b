import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Upstream URLs are judged before any connection, and upstream text is made harmless before anyone sees it.
@Suite struct UpstreamTextTests {
    @Test(arguments: [
        ("http://example.org/stream", UpstreamURL.http), ("HTTPS://user:pw@example.org:8443/a?b", .http),
        ("/var/lib/radio/demo.mp3", .file), ("file:///tmp/a.mp3", .file), ("relative/path.mp3", .file),
    ])
    func acceptedURLs(_ url: String, _ kind: UpstreamURL) throws {
        #expect(try UpstreamURL.classify(url) == kind)
    }

    @Test(arguments: [
        ("htp://example.org/", "unsupported URL scheme htp://"),
        ("ftp://example.org/a.mp3", "unsupported URL scheme ftp://"),
        ("http://", "no host name"), ("http:///path", "no host name"), ("https://:8000/", "no host name"),
        ("file:a.mp3", "absolute path"), ("http://example.org/a b", "space or control character (U+20)"),
        ("http://x/\u{7}", "(U+7)"), ("", "empty upstream"),
    ])
    func refusedURLs(_ url: String, _ message: String) {
        #expect {
            _ = try UpstreamURL.classify(url)
        } throws: { error in
            guard let error = error as? DownloadError else { return false }
            return error.kind == .badURL && error.message.contains(message)
        }
    }

    @Test func aStationWithAnUnusableUpstreamIsRefusedAtStartUp() {
        var configuration = StationConfiguration()
        configuration.upstream = "ftp://example.org/a.mp3"
        #expect {
            try configuration.validate()
        } throws: { error in
            "\(error)"
                == "station main: upstream unsupported URL scheme ftp:// (use http://, https://, tcp://, file:// or a path)"
        }
    }

    @Test func controlAndBidiCharactersAreRemoved() {
        #expect(Sanitized.text("Artist - Title\n<0>injected") == "Artist - Title<0>injected")
        #expect(Sanitized.text("\u{1B}[2J\u{1B}[31mred\u{1B}[0m") == "[2J[31mred[0m")
        #expect(Sanitized.text("a\r\nb\u{0}c\u{7F}d\u{85}e\u{9B}f") == "abcdef")
        #expect(Sanitized.text("\u{202E}evil\u{202C} \u{2066}x\u{2069}\u{200F}") == "evil x")
        #expect(Sanitized.text("Beyoncé – Déjà Vu 🎵") == "Beyoncé – Déjà Vu 🎵")
    }

    @Test func lengthIsCappedInBytesWithoutSplittingACharacter() {
        let long = String(repeating: "é", count: 5000)
        let capped = Sanitized.text(long, limit: Sanitized.titleLimit)
        #expect(capped.utf8.count == 1023, "510 two-byte letters and the 3-byte ellipsis")
        #expect(capped.hasSuffix("…") && capped.dropLast().allSatisfy { $0 == "é" })
        #expect(Sanitized.text("abc", limit: 3) == "abc")
        #expect(Sanitized.text("abcdef", limit: 5) == "ab…")
        #expect(Sanitized.text("abcd", limit: 3) == "…")
        #expect(Sanitized.text("abcd", limit: 2) == "")
        #expect(Sanitized.text(String(repeating: "x", count: 300)).utf8.count == Sanitized.headerLimit)
        // One "character" of 62 KB (a letter and 31 000 combining marks) is cut in bytes, at a scalar.
        let heavy = "A" + String(repeating: "\u{301}", count: 31_000)
        #expect(heavy.count == 1)
        let cut = Sanitized.text(heavy, limit: Sanitized.titleLimit)
        #expect(cut.utf8.count <= Sanitized.titleLimit && cut.utf8.count > 1000 && cut.unicodeScalars.first == "A")
        // A letter whose marks the cut would split goes whole; the characters before it stay.
        let split = Sanitized.text("abcde\u{301}\u{301}", limit: 8)
        #expect(split == "abcd…", "\(Array(split.unicodeScalars))")
        #expect(Sanitized.text("日本語のタイトル", limit: 12) == "日本語…")
    }
}
