import Foundation
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The public HTTP address's rules without sockets: the router's answers, the stream head, the index page's
/// escaping, and the event stream's schedule on virtual time.
@Suite struct PublicHTTPTests {
    static let directory: PublicDirectory = {
        var info = StationInfo()
        info.displayName = "Jazz <FM>"
        info.genre = "jazz"
        info.url = "https://jazz.example.org/"
        var jazz = PublicDirectory.Mount(
            path: "/jazz.opus", eventsPath: "/jazz/events", station: "jazz", info: info,
            title: "Miles & \"Trane\" <script>alert(1)</script>", bitrate: 96_000, rawAddress: "0.0.0.0:8000")
        jazz.channels = 2
        let news = PublicDirectory.Mount(
            path: "/news-low.opus", eventsPath: "/news-low/events", station: "news", rendition: "low", bitrate: 32_000,
            channels: 1, rawAddress: "[::]:8002")
        return PublicDirectory(mounts: [jazz, news])
    }()

    static func route(_ text: String, directory: PublicDirectory = directory) -> PublicRouter.Action {
        PublicRouter.route(HTTPRequestHead.parse(Array(text.utf8), limit: 8192), directory: directory)
    }

    static func response(_ text: String, directory: PublicDirectory = directory) -> HTTPResponse? {
        guard case .respond(let response) = route(text, directory: directory) else { return nil }
        return response
    }

    static func headText(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func aMountIsHandedToItsStationWithIcecastsHead() throws {
        guard case .stream(let mount, let head, _) = Self.route("GET /jazz.opus HTTP/1.1\r\nHost: x\r\n\r\n") else {
            Issue.record("not a stream")
            return
        }
        #expect(mount == 0)
        let text = Self.headText(head)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"))
        for line in [
            "Content-Type: audio/ogg", "Cache-Control: no-cache, no-store", "Access-Control-Allow-Origin: *",
            "icy-name: Jazz <FM>", "icy-genre: jazz", "icy-url: https://jazz.example.org/", "icy-br: 96",
            "Connection: close",
        ] {
            #expect(text.contains("\r\n\(line)\r\n"), "\(line)")
        }
        #expect(!text.lowercased().contains("content-length"))
        #expect(!text.contains("\r\nicy-description:"))  // not configured, not sent
        #expect(!text.contains("icy-metaint"))  // Ogg carries its own metadata
        // HTTP/1.0 needs no Host; Range and Icy-MetaData change nothing (a live stream, from the live point).
        guard
            case .stream(1, _, _) = Self.route(
                "GET /news-low.opus HTTP/1.0\r\nRange: bytes=0-\r\nIcy-MetaData: 1\r\n\r\n")
        else {
            Issue.record("HTTP/1.0 with Range not streamed")
            return
        }
    }

    @Test func headAnswersTheStreamHeadOnly() throws {
        let response = try #require(Self.response("HEAD /jazz.opus HTTP/1.1\r\nHost: x\r\n\r\n"))
        guard case .stream(_, let head, _) = Self.route("GET /jazz.opus HTTP/1.1\r\nHost: x\r\n\r\n") else {
            Issue.record("not a stream")
            return
        }
        #expect(response.encoded == head)
        let index = try #require(Self.response("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(Self.headText(index.encoded).hasSuffix("\r\n\r\n"))  // no body
    }

    @Test func eventsHaveTheirOwnPath() {
        guard case .events(let mount, let head, _) = Self.route("GET /news-low/events HTTP/1.1\r\nHost: x\r\n\r\n")
        else {
            Issue.record("not an event stream")
            return
        }
        #expect(mount == 1)
        #expect(Self.headText(head).contains("\r\nContent-Type: text/event-stream; charset=utf-8\r\n"))
        #expect(PublicDirectory.eventsPath(forMount: "/main.opus") == "/main/events")
    }

    @Test(arguments: [
        ("GET /nope.opus HTTP/1.1\r\nHost: x\r\n\r\n", 404),
        ("GET /jazz.opus HTTP/1.1\r\n\r\n", 400),  // HTTP/1.1 without Host
        ("GET /jazz.opus\r\n\r\n", 400),
        ("POST /jazz.opus HTTP/1.1\r\nHost: x\r\n\r\n", 405),
        ("DELETE / HTTP/1.1\r\nHost: x\r\n\r\n", 405),
        ("GET /status.json HTTP/1.1\r\nHost: x\r\n\r\n", 404),  // the status address's, not the public one's
        ("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 404),
        ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 200),
        ("OPTIONS /jazz.opus HTTP/1.1\r\nHost: x\r\n\r\n", 204),
    ])
    func answers(request: String, status: Int) throws {
        let response = try #require(Self.response(request))
        #expect(response.status == status)
        #expect(response.headers.contains { $0.0 == "Access-Control-Allow-Origin" && $0.1 == "*" })
        if status == 405 { #expect(response.headers.contains { $0.0 == "Allow" && $0.1 == "GET, HEAD, OPTIONS" }) }
    }

    @Test func tooLongRequestsAre414And431() {
        let line = "GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n"
        #expect(Self.response(line)?.status == 414)
        let head = "GET / HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 500) + "\r\n"
        #expect(Self.response(head)?.status == 431)
    }

    @Test func aPreflightAllowsTheHeadersWebPlayersSend() throws {
        let asked = try #require(
            Self.response(
                "OPTIONS /jazz.opus HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\n"
                    + "Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: icy-metadata, range\r\n\r\n"
            ))
        let text = Self.headText(asked.encoded)
        #expect(text.hasPrefix("HTTP/1.1 204 No Content\r\n"))
        #expect(text.contains("\r\nAccess-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"))
        #expect(text.contains("\r\nAccess-Control-Allow-Headers: icy-metadata, range\r\n"))
        #expect(!text.contains("Content-Length"))
        // Something that is not a list of names is not echoed.
        let odd = try #require(
            Self.response("OPTIONS / HTTP/1.1\r\nHost: x\r\nAccess-Control-Request-Headers: a;b=\"c\"\r\n\r\n"))
        #expect(Self.headText(odd.encoded).contains("Access-Control-Allow-Headers: \(PublicRouter.allowedHeaders)"))
    }

    /// The station page: a section per station with one player offering its formats, the playlists, the last
    /// titles with their UTC times, one event stream for the page; every string escaped; no external asset.
    @Test func theStationPage() throws {
        var directory = Self.directory
        var mp3 = PublicDirectory.Mount(path: "/jazz.mp3", eventsPath: "/jazz.mp3/events", station: "jazz")
        mp3.format = .mp3
        directory.mounts.insert(mp3, at: 1)
        directory.mounts[0].hls = HLSStream(settings: HLSSegmenter.Settings())
        var history = SongHistory()
        history.record("So <What>", at: 1_796_400_000, input: "1")
        history.record("Blue in Green", at: 1_796_400_560, input: "live")
        directory.histories = ["jazz": history]
        let page = IndexPage.html(directory)
        #expect(page.components(separatedBy: "<section ").count == 3, "one section per station")
        #expect(
            page.contains("<h2 id=\"name-jazz\">Jazz &lt;FM&gt;</h2>")
                && page.contains("<h2 id=\"name-news\">news</h2>"))
        #expect(page.contains("<audio controls preload=\"none\" aria-label=\"Listen to Jazz &lt;FM&gt;\">"))
        #expect(
            page.contains(
                "<source src=\"/jazz.opus\" type=\"audio/ogg; codecs=opus\">\n<source src=\"/jazz.mp3\" type=\"audio/mpeg\">\n<source src=\"/jazz/live.m3u8\" type=\"application/vnd.apple.mpegurl\">"
            ))
        #expect(
            page.contains("<a href=\"/jazz.opus.m3u\">.m3u</a>")
                && page.contains("<a href=\"/jazz.mp3.xspf\">.xspf</a>"))
        #expect(
            page.contains("Opus low <a href=\"/news-low.opus.m3u\">.m3u</a> <a href=\"/news-low.opus.pls\">.pls</a>"))
        #expect(
            page.contains(
                "<strong id=\"title-jazz\" aria-live=\"polite\">Miles &amp; &quot;Trane&quot; &lt;script&gt;alert(1)&lt;/script&gt;</strong>"
            ))
        #expect(!page.contains("<script>alert"))
        #expect(
            page.contains(
                "<li><time datetime=\"2026-12-04T16:09:20.000Z\">16:09</time><span>Blue in Green</span></li>\n<li><time datetime=\"2026-12-04T16:00:00.000Z\">16:00</time><span>So &lt;What&gt;</span></li>"
            ))
        #expect(
            page.contains("jazz · 0 listening now")
                && page.contains("<a href=\"https://jazz.example.org/\" rel=\"noopener\">"))
        #expect(
            IndexPage.script.contains("new EventSource(\"/events\")")
                && IndexPage.script.components(separatedBy: "EventSource(").count == 2)
        for external in ["src=\"http", "href=\"//", "href=\"http://", "@import", "src=\"//"] {
            #expect(!page.contains(external) && !IndexPage.style.contains(external), "no external asset: \(external)")
        }
        // Nothing inline: the stylesheet and the script are the page's own files, which its policy alone allows.
        #expect(!page.contains("<style") && !page.contains("<script>") && !page.contains(" style=\""))
        #expect(
            page.contains("<link rel=\"stylesheet\" href=\"/station-page.css\">")
                && page.contains("<script src=\"/station-page.js\" defer></script>"))
        let served = try #require(Self.response("GET / HTTP/1.1\r\nHost: x\r\n\r\n", directory: directory))
        #expect(
            Self.headText(served.encoded).contains(
                "Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'"))
        for (path, type, text) in [
            ("/station-page.css", "text/css", IndexPage.style),
            ("/station-page.js", "text/javascript", IndexPage.script),
        ] {
            let file = try #require(Self.response("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n", directory: directory))
            #expect(file.status == 200 && file.body == Array(text.utf8))
            #expect(Self.headText(file.encoded).contains("Content-Type: \(type); charset=utf-8"))
        }
        #expect(
            IndexPage.titles(directory)
                == "{\"jazz\":\"Miles & \\\"Trane\\\" <script>alert(1)</script>\",\"news\":\"\"}")
        guard
            case .pageEvents = PublicRouter.route(
                HTTPRequestHead.parse(Array("GET /events HTTP/1.1\r\nHost: x\r\n\r\n".utf8), limit: 8192),
                directory: directory)
        else {
            Issue.record("/events is not the page's event stream")
            return
        }
    }

    /// One escaper, by Unicode scalars: a quote followed by a combining mark is one `Character` that no case for a
    /// quote matches, and once left an attribute open on the page (a source's `ice-name` ran script in Chromium).
    @Test func markupIsEscapedByScalars() throws {
        let hostile = "X\"\u{301} autofocus tabindex=1 onfocus=document.title=location.port y=\"\u{301}"
        #expect(hostile.filter { $0 == "\"" }.isEmpty, "the quotes hide inside graphemes")
        let escaped = Markup.escape(hostile)
        #expect(!escaped.unicodeScalars.contains("\""), "\(escaped)")
        #expect(escaped == "X&quot;\u{301} autofocus tabindex=1 onfocus=document.title=location.port y=&quot;\u{301}")
        #expect(Markup.escape("<a href='x'>&amp;</a>") == "&lt;a href=&#39;x&#39;&gt;&amp;amp;&lt;/a&gt;")
        #expect(Markup.escape("<\u{338}>\u{20DD}&\u{301}'\u{301}") == "&lt;\u{338}&gt;\u{20DD}&amp;\u{301}&#39;\u{301}")
        // Bidi overrides and isolates, C0 and C1 controls and XML's non-characters are left out; tab and line
        // breaks stay (XML allows them).
        #expect(
            Markup.escape("a\u{202E}b\u{2066}c\u{2069}\u{0}\u{1B}[31m\u{85}\u{FFFE}\u{FFFF}\td\ne") == "abc[31m\td\ne")
        #expect(Markup.escape("Beyoncé – Déjà Vu 🎵") == "Beyoncé – Déjà Vu 🎵")

        // The page with the hostile name and link from a live source: no attribute is broken out of.
        var info = StationInfo()
        info.displayName = hostile
        info.url = "https://example.org/\"\u{301} onmouseover=alert(1) x=\"\u{301}"
        info.description = "<img src=x onerror=alert(1)>\u{301}"
        let mount = PublicDirectory.Mount(
            path: "/main.opus", eventsPath: "/main/events", station: "main", info: info, title: "\"\u{301}<b>",
            bitrate: 96_000, rawAddress: "127.0.0.1:8000")
        let page = IndexPage.html(PublicDirectory(mounts: [mount]))
        for tag in page.split(separator: "<").dropFirst() {
            // Inside each tag, every attribute value is quoted and no quote is left unescaped inside one.
            let inside = tag.prefix { $0 != ">" }
            #expect(
                inside.unicodeScalars.filter { $0 == "\"" }.count % 2 == 0, "an attribute left open: <\(inside)>")
        }
        #expect(!page.contains("onfocus=document.title=location.port y=\""))
        #expect(page.contains("aria-label=\"Listen to X&quot;\u{301} autofocus"))
        #expect(!page.contains("<img"))
    }

    @Test func eventStreamSendsTheTitleAtOnceThenChangesAndKeepAlives() {
        var events = EventStream(now: 100)
        #expect(Self.headText(events.output(title: "A", now: 100)) == "retry: 3000\n\nevent: title\ndata: A\n\n")
        #expect(events.output(title: "A", now: 110).isEmpty)
        #expect(Self.headText(events.output(title: "B", now: 111)) == "event: title\ndata: B\n\n")
        #expect(events.output(title: "B", now: 125.9).isEmpty)  // 15 s after the last thing sent
        #expect(Self.headText(events.output(title: "B", now: 126)) == ": keep-alive\n\n")
        #expect(Self.headText(events.output(title: nil, now: 127)) == "event: title\ndata: \n\n")
        #expect(EventStream.event("title", data: "a\nb") == "event: title\ndata: a\ndata: b\n\n")
    }

    @Test func mountsAndStationTextAreChecked() {
        #expect(Values.mount("/live.opus") == "live.opus")
        #expect(Values.mount("live") == "live")
        for bad in ["", "/", "../x", ".hidden", "a/b", "a b", String(repeating: "a", count: 129), "é.opus"] {
            #expect(Values.mount(bad) == nil, "\(bad)")
        }
        #expect(Values.line("Jazz FM") == "Jazz FM")
        #expect(Values.line("a\u{1B}[31m") == nil)
        #expect(Values.line("") == nil)
        var station = StationConfiguration()
        station.name = "jazz"
        #expect(station.mountPath == "/jazz.opus")
        station.mount = "live"
        #expect(station.mountPath == "/live")
    }
}
