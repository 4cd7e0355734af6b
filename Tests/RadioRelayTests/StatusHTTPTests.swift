import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The status endpoint's request parser and router, without sockets.
@Suite struct StatusHTTPTests {
    static func parse(_ text: String, limit: Int = 8192) -> HTTPRequestHead.Result {
        HTTPRequestHead.parse(Array(text.utf8), limit: limit)
    }

    static func request(_ method: String, _ path: String) -> HTTPRequestHead.Result {
        .request(.init(method: method, path: path, version: "HTTP/1.1"))
    }

    @Test func readsARequestHeadInAnyChunking() {
        let text = "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n"
        let bytes = Array(text.utf8)
        for end in 0..<bytes.count {
            #expect(HTTPRequestHead.parse(Array(bytes[..<end]), limit: 8192) == .incomplete, "\(end) bytes")
        }
        let fields = [HTTPRequestHead.Field(name: "host", value: "a"), .init(name: "accept", value: "*/*")]
        var expected = HTTPRequestHead.Request(method: "GET", path: "/metrics", version: "HTTP/1.1", fields: fields)
        expected.query = "x=1"
        #expect(HTTPRequestHead.parse(bytes, limit: 8192) == .request(expected))
        guard case .request(let parsed) = Self.parse("GET / HTTP/1.1\r\nICY-MetaData:\t 1 \r\nX-Empty:\r\n\r\n") else {
            Issue.record("not parsed")
            return
        }
        #expect(parsed.field("icy-metadata") == "1")
        #expect(parsed.field("x-empty") == "")
        #expect(parsed.field("host") == nil)
        #expect(
            Self.parse("\r\nHEAD /health HTTP/1.0\n\n")
                == .request(.init(method: "HEAD", path: "/health", version: "HTTP/1.0")))
        #expect(Self.parse("GET / HTTP/1.1\r\n\r\nbody") == Self.request("GET", "/"))
    }

    @Test(arguments: [
        "GET /\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET ftp://x/ HTTP/1.1\r\n\r\n", "GET / HTTP/2.0\r\n\r\n",
        "GET http://user:pw@x/ HTTP/1.1\r\n\r\n", "GET http:/// HTTP/1.1\r\n\r\n", "GET main.opus HTTP/1.1\r\n\r\n",
        "GET * HTTP/1.1\r\n\r\n",
        "G(T / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\n: empty\r\n\r\n", "GET / HTTP/1.1\r\nA: b\u{1}c\r\n\r\n", "GET /\u{7F} HTTP/1.1\r\n\r\n",
        "\u{16}\u{3}\u{1}\u{2}\u{0}\n",
    ])
    func refusesMalformedHeadsAsSoonAsTheLineEnds(text: String) {
        guard case .malformed = Self.parse(text) else {
            Issue.record("accepted \(text.debugDescription): \(Self.parse(text))")
            return
        }
    }

    /// RFC 9112 framing: a body is announced (and the connection closes after the answer), never taken; lengths
    /// that disagree, a length beside `Transfer-Encoding` and two `Host` fields are malformed; an absolute-form
    /// target gives its path, and its authority stands for `Host`.
    @Test func framingFollowsRFC9112() throws {
        func parsed(_ text: String) throws -> HTTPRequestHead.Request {
            guard case .request(let request) = Self.parse(text) else {
                Issue.record("not a request: \(text.debugDescription) → \(Self.parse(text))")
                throw CancellationError()
            }
            return request
        }
        #expect(try !parsed("GET /a HTTP/1.1\r\nHost: x\r\n\r\n").hasBody)
        #expect(try !parsed("GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").hasBody)
        #expect(try parsed("GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n").hasBody)
        #expect(try parsed("GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 12, 12\r\n\r\n").hasBody)
        #expect(try parsed("GET /a HTTP/1.1\r\nHost: x\r\ncontent-length: 5\r\nContent-Length: 5\r\n\r\n").hasBody)
        #expect(try parsed("GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n").hasBody)
        for text in [
            "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 6\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "GET /a HTTP/1.1\r\nHost: x\r\nhost: x\r\n\r\n",
        ] {
            guard case .malformed = Self.parse(text) else {
                Issue.record("accepted \(text.debugDescription)")
                continue
            }
        }
        let absolute = try parsed("GET http://radio.example:8001/main.opus?x=1 HTTP/1.1\r\nHost: other\r\n\r\n")
        #expect(absolute.path == "/main.opus" && absolute.authority == "radio.example:8001")
        #expect(absolute.host == "radio.example:8001")
        #expect(try parsed("GET HTTPS://[::1]:8080 HTTP/1.1\r\n\r\n").path == "/")
        #expect(try parsed("GET HTTPS://[::1]:8080 HTTP/1.1\r\n\r\n").host == "[::1]:8080")
        #expect(try parsed("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n").path == "*")
        #expect(try parsed("GET /a HTTP/1.1\r\nHost: x\r\n\r\n").host == "x")
    }

    /// The status endpoint judges an absolute-form target's authority as it judges `Host`.
    @Test func anAbsoluteFormTargetIsAnsweredAndItsAuthorityChecked() {
        let access = StatusAccess()
        let snapshot = { StatusSnapshot(stations: []) }
        let good = StatusRouter.respond(
            to: Self.parse("GET http://127.0.0.1:8080/status.json HTTP/1.1\r\nHost: evil.example\r\n\r\n"),
            access: access, snapshot: snapshot)
        #expect(good.status == 200)
        let misdirected = StatusRouter.respond(
            to: Self.parse("GET http://evil.example/status.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
            access: access, snapshot: snapshot)
        #expect(misdirected.status == 421)
        let twoHosts = StatusRouter.respond(
            to: Self.parse("GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n"),
            access: access, snapshot: snapshot)
        #expect(twoHosts.status == 400)
    }

    @Test func malformedRequestLineIsRefusedBeforeTheHeadEnds() {
        guard case .malformed = Self.parse("BAD LINE\r\nHost: a\r\n") else {
            Issue.record("waited for the end of the head")
            return
        }
    }

    @Test func tooLongIs414ForTheRequestLineAnd431ForTheHead() {
        let longTarget = "GET /" + String(repeating: "a", count: 300)
        #expect(Self.parse(longTarget, limit: 256) == .requestLineTooLong)
        let longHead = "GET / HTTP/1.1\r\n" + String(repeating: "X-A: b\r\n", count: 40)
        #expect(Self.parse(longHead, limit: 256) == .headTooLarge)
        // A head that fits exactly is read.
        let exact = "GET / HTTP/1.1\r\n\r\n"
        #expect(Self.parse(exact, limit: exact.utf8.count) == Self.request("GET", "/"))
        #expect(Self.parse(exact, limit: 0) == .requestLineTooLong)
        #expect(StatusRouter.respond(to: .requestLineTooLong) { StatusSnapshot() }.status == 414)
        #expect(StatusRouter.respond(to: .headTooLarge) { StatusSnapshot() }.status == 431)
        #expect(StatusRouter.respond(to: .malformed("x")) { StatusSnapshot() }.status == 400)
    }

    @Test func routes() throws {
        var taken = 0
        let snapshot = { () -> StatusSnapshot in
            taken += 1
            return StatusSnapshot(stations: [StationStatus(name: "main")])
        }
        let json = StatusRouter.respond(to: Self.request("GET", "/status.json"), snapshot: snapshot)
        #expect(json.status == 200 && json.headers.contains { $0 == ("Content-Type", "application/json") })
        let metrics = StatusRouter.respond(to: Self.request("GET", "/metrics"), snapshot: snapshot)
        #expect(metrics.headers.contains { $0.1 == "text/plain; version=0.0.4; charset=utf-8" })
        #expect(StatusRouter.respond(to: Self.request("GET", "/health"), snapshot: snapshot).status == 200)
        #expect(taken == 3)
        #expect(StatusRouter.respond(to: Self.request("GET", "/nope"), snapshot: snapshot).status == 404)
        #expect(StatusRouter.respond(to: Self.request("GET", "/"), snapshot: snapshot).status == 200)
        #expect(taken == 3, "a snapshot was taken for a path that does not report one")
        let post = StatusRouter.respond(to: Self.request("POST", "/metrics"), snapshot: snapshot)
        #expect(post.status == 405 && post.headers.contains { $0 == ("Allow", "GET, HEAD") })
        #expect(taken == 3)
    }

    @Test func headSendsTheHeadersWithoutTheBody() throws {
        let snapshot = { StatusSnapshot(stations: [StationStatus(name: "main")]) }
        let get = StatusRouter.respond(to: Self.request("GET", "/status.json"), snapshot: snapshot).encoded
        let head = StatusRouter.respond(to: Self.request("HEAD", "/status.json"), snapshot: snapshot).encoded
        let getText = String(decoding: get, as: UTF8.self)
        let headText = String(decoding: head, as: UTF8.self)
        #expect(getText.hasPrefix(headText) && headText.hasSuffix("\r\n\r\n"))
        #expect(headText.hasPrefix("HTTP/1.1 200 OK\r\n") && headText.contains("\r\nConnection: close\r\n"))
        #expect(headText.contains("\r\nContent-Length: \(get.count - head.count)\r\n"))
    }
}
