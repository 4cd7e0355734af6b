import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `HTTPHeadScan`: a head received in pieces is parsed only when it can be decided, with the same result as parsing
/// it whole, and each byte is looked at once.
@Suite struct HTTPHeadScanTests {
    /// Feeds `text` `step` bytes at a time; the result and how many full parses it took.
    static func feed(_ text: String, step: Int, limit: Int = 8192) -> (HTTPRequestHead.Result, parses: Int) {
        let bytes = Array(text.utf8)
        var scan = HTTPHeadScan()
        var received: [UInt8] = []
        var parses = 0
        var offset = 0
        while offset < bytes.count {
            received += bytes[offset..<min(bytes.count, offset + step)]
            offset += step
            guard scan.shouldParse(received, limit: limit) else { continue }
            parses += 1
            let result = HTTPRequestHead.parse(received, limit: limit)
            if result != .incomplete { return (result, parses) }
        }
        return (.incomplete, parses)
    }

    @Test(arguments: [1, 2, 7, 1000])
    func piecesDecideAsTheWholeDoes(step: Int) {
        let heads = [
            "GET /a HTTP/1.1\r\nHost: x\r\n\r\n", "\r\n\nGET /b HTTP/1.0\n\n", "GET /c HTTP/1.1\r\nA: b\r\n \r\n",
            "BAD\r\n", "GET /d HTTP/1.1\r\n" + String(repeating: "A:b\r\n", count: 3000),
            "GET /" + String(repeating: "e", count: 9000), "\r\r\nGET /f HTTP/1.1\r\n\r\n",
        ]
        for head in heads {
            let whole = HTTPRequestHead.parse(Array(head.utf8), limit: 8192)
            let (pieces, parses) = Self.feed(head, step: step)
            #expect(pieces == whole, "\(head.prefix(40).debugDescription)")
            #expect(parses <= 3, "\(parses) parses for \(head.prefix(40).debugDescription)")
        }
    }

    /// 1 600 header lines one byte at a time: two parses, not one per line.
    @Test func manyLinesCostTwoParses() {
        let head = "GET / HTTP/1.1\r\n" + String(repeating: "A:b\r\n", count: 1600) + "\r\n"
        let (result, parses) = Self.feed(head, step: 1)
        guard case .request(let request) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(request.fields.count == 1600 && parses == 2)
    }
}
