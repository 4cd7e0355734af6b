import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `ResponseHeaders`: libcurl's header lines → the final response's headers, bounded (the HeaderFuzz target checks
/// the same contract on random input).
@Suite struct ResponseHeadersTests {
    /// Feeds `text` as libcurl does: one line per call, split after each LF (bytes: "\r\n" is one Character).
    static func headers(_ text: String) -> ResponseHeaders {
        take(Array(text.utf8))
    }

    static func take(_ bytes: [UInt8]) -> ResponseHeaders {
        var headers = ResponseHeaders()
        var start = 0
        for (i, byte) in bytes.enumerated() where byte == 0x0A {
            bytes[start...i].withUnsafeBytes { headers.take($0) }
            start = i + 1
        }
        if start < bytes.count { bytes[start...].withUnsafeBytes { headers.take($0) } }
        return headers
    }

    @Test func readsAShoutcastV1Answer() throws {
        var bytes = Array("ICY 200 OK\r\nicy-notice1:<BR>This stream requires Winamp<BR>\r\nicy-name:Caf".utf8)
        bytes += [0xE9] + Array(" FM\r\nicy-genre:Rock\r\ncontent-type:audio/mpeg\r\nicy-metaint:8192\r\n\r\n".utf8)
        let headers = Self.take(bytes)
        #expect(headers.responses == 1)
        #expect(headers["icy-name"] == "Café FM")  // Windows-1252, as SHOUTcast sends it
        #expect(headers["content-type"] == "audio/mpeg")
        #expect(try headers.icyMetaInterval() == 8192)
        #expect(headers.fields.count == 5)
        #expect(headers.malformed == 0 && headers.ignored == 0)
    }

    @Test func namesAreLowercasedAndValuesTrimmed() {
        let headers = Self.headers("HTTP/1.1 200 OK\r\nIcy-MetaInt :\t 16000 \t\r\nICY-NAME: A  B\r\nX-Empty:\r\n")
        #expect(headers.fields == ["icy-metaint": "16000", "icy-name": "A  B", "x-empty": ""])
    }

    @Test func onlyTheFinalResponseCounts() throws {
        let redirect = Self.headers(
            """
            HTTP/1.1 302 Found\r\nLocation: http://elsewhere/\r\nicy-metaint: 1\r\n\r\n\
            HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: audio/mpeg\r\n\r\n
            """)
        #expect(redirect.fields == ["content-type": "audio/mpeg"])
        #expect(redirect.responses == 3)
        #expect(try redirect.icyMetaInterval() == nil)
    }

    @Test func malformedLinesAreCountedAndIgnored() {
        let headers = Self.headers(
            "HTTP/1.1 200 OK\r\nno colon\r\n: no name\r\nbad name: x\r\n folded: continuation\r\nok: yes\r\nICY \r\n")
        #expect(headers.fields == ["ok": "yes"])
        #expect(headers.malformed == 5)
    }

    @Test func keepsAtMostAHundredLinesAnd64KiB() {
        let many = Self.headers((0..<150).map { "x-\($0): \($0)\r\n" }.joined() + "icy-metaint: 8192\r\n")
        #expect(many.keptLines == ResponseHeaders.maxLines)
        #expect(many.fields.count == 100 && many.ignored == 51)
        #expect(many["icy-metaint"] == nil)  // came after the bound
        let huge = Self.headers(
            "icy-name: \(String(repeating: "n", count: 40_000))\r\nicy-description: \(String(repeating: "d", count: 30_000))\r\nicy-br: 128\r\n"
        )
        #expect(huge["icy-name"]?.count == 40_000 && huge["icy-description"] == nil && huge["icy-br"] == "128")
        #expect(huge.keptBytes <= ResponseHeaders.maxBytes && huge.ignored == 1)
        // A new response starts with fresh bounds.
        var next = many
        next.take("HTTP/1.1 200 OK\r\n")
        next.take("icy-metaint: 8192\r\n")
        #expect(next.fields == ["icy-metaint": "8192"] && next.ignored == 0)
    }

    @Test(arguments: [("8192", 8192), ("1", 1), ("65535", 65535), (" 16000 ", 16000), ("+64", 64)])
    func validMetaIntervals(_ text: String, _ value: Int) throws {
        #expect(try ResponseHeaders.icyMetaInterval(text) == value)
    }

    @Test(arguments: ["0", "-5", "65536", "99999999999999999999999", "0x2000", "8192\u{0}", "", "८१९२"])
    func invalidMetaIntervalsNameTheValue(_ text: String) {
        #expect { try ResponseHeaders.icyMetaInterval(text) } throws: { error in
            guard let error = error as? ResponseHeaders.InvalidValue else { return false }
            return error.message == "icy-metaint \"\(Sanitized.text(text))\" is not a whole number from 1 to 65535"
        }
    }

    @Test func aHostileMetaIntervalIsShownShortAndClean() {
        let text = "\u{1B}[31m\n<0>" + String(repeating: "9", count: 100)
        #expect { try ResponseHeaders.icyMetaInterval(text) } throws: { error in
            guard let message = (error as? ResponseHeaders.InvalidValue)?.message else { return false }
            return message.hasPrefix("icy-metaint \"[31m<0>999") && message.contains("…\" is not a whole number")
                && !message.unicodeScalars.contains { $0.value < 0x20 } && message.count < 100
        }
    }
}
