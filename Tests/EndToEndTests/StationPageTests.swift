import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: one real peer at a time.
extension PeerTests {
    /// The station page at `/` in a real browser: Chromium's screenshots at a desktop width and a phone's (390 px),
    /// and its `<audio>` playing 10 s. The page's own player is driven from a page of the test's on the same origin
    /// (HAProxy in front of both, so the test page may reach into the station page's document): it plays the first
    /// source Chromium takes, the Ogg Opus mount.
    @Suite(
        .timeLimit(.minutes(2)),
        .enabled(
            if: tool("chromium") != nil && tool("haproxy") != nil, "needs chromium and haproxy (.ci/deps --test)"))
    struct StationPageTests {
        /// A PNG's width and height from its IHDR chunk.
        static func pngSize(_ path: String) -> (width: Int, height: Int)? {
            guard let data = FileManager.default.contents(atPath: path), data.count > 24,
                data.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            else { return nil }
            let bytes = [UInt8](data[16..<24])
            func int(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
            return (int(0), int(4))
        }

        static func screenshot(_ url: String, width: Int, height: Int, to path: String) throws -> Int32 {
            let profile = temporaryPath("chromium-shot")
            try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: profile) }
            return try run(
                try #require(tool("chromium")),
                [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                    "--user-data-dir=\(profile)", "--window-size=\(width),\(height)", "--screenshot=\(path)", url,
                ]
            ).status
        }

        /// The test's page: the station page in a same-origin frame, its `<audio>` played, reported 10 s later.
        static let driver = """
            <!doctype html><html><body><iframe id="f" src="/" style="width:100%;height:800px"></iframe><script>
            const errors = []; let a = null, start = null, began = null;
            const report = () => fetch("/report?" + encodeURIComponent(JSON.stringify({
              advanced: start === null ? 0 : a.currentTime - start, wall: began === null ? 0 : (Date.now() - began) / 1000,
              errors, paused: a ? a.paused : true, src: a ? a.currentSrc : "",
              label: a ? a.getAttribute("aria-label") : "" })));
            document.getElementById("f").addEventListener("load", () => {
              a = document.getElementById("f").contentDocument.querySelector("audio");
              if (!a) { errors.push("no audio element"); report(); return; }
              a.addEventListener("error", () => errors.push("error " + (a.error ? a.error.code : "?")));
              a.addEventListener("playing", () => {
                if (start !== null) return;
                start = a.currentTime; began = Date.now();
                setTimeout(report, 10000);
              });
              a.play().catch((e) => errors.push("play: " + e));
            });
            setTimeout(() => { if (start === null) report(); }, 25000);
            </script></body></html>
            """

        @Test func screenshotsAndTheAudioPlaying() throws {
            let station = try ServedStation(
                ["--mp3", "yes", "--display-name", "Test Radio", "--genre", "test", "--description", "Two tones."])
            defer { station.stop() }
            try #require(waitUntil(10) { (try? station.station())?.upstream == .connected })
            let base = "http://127.0.0.1:\(station.http)"
            let page = try httpGet(station.http, "/")
            #expect(page.status == 200 && page.text.contains("<h2 id=\"name-test\">Test Radio</h2>"))
            let events = try httpExchange(station.http, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n", seconds: 0.5)
            #expect(
                String(decoding: events.body, as: UTF8.self).contains("event: title\ndata: {\"test\":"), "\(events)")

            // Screenshots: a desktop and a phone (390 px).
            let directory = temporaryPath("shots")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            for (width, height) in [(1280, 900), (390, 844)] {
                let path = directory + "/page-\(width).png"
                #expect(try Self.screenshot(base + "/", width: width, height: height, to: path) == 0)
                let size = Self.pngSize(path)
                let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                print(
                    "screenshot \(width)x\(height): \(size.map { "\($0.width)x\($0.height)" } ?? "none"), \(bytes) bytes"
                )
                #expect(size?.width == width && size?.height == height && bytes > 10_000)
            }

            // The page's <audio> plays 10 s (the test page and the station page on one origin through HAProxy).
            let driver = try ChromiumAudioPage(html: Self.driver)
            defer { driver.stop() }
            let front = try freePort()
            let haproxy = try HAProxyTests.HAProxy(
                config: """
                    global
                        maxconn 1000
                    defaults
                        mode http
                        timeout connect 5s
                        timeout client 1h
                        timeout server 1h
                    frontend same-origin
                        bind 127.0.0.1:\(front)
                        use_backend page if { path /page.html } || { path_beg /report }
                        default_backend relay
                    backend relay
                        server relay 127.0.0.1:\(station.http)
                    backend page
                        server page 127.0.0.1:\(driver.site.port)

                    """)
            defer { haproxy.stop() }
            try #require(waitUntil(10) { (try? ListenerClient(port: front)) != nil }, "\(haproxy.log)")
            let played = try driver.play(at: "http://127.0.0.1:\(front)/page.html")
            print("the station page's <audio> in Chromium: \(played)")
            #expect((played["errors"] as? [Any])?.isEmpty == true, "\(played)")
            #expect((played["advanced"] as? Double ?? 0) >= 8, "\(played)")
            #expect(
                played["src"] as? String == "http://127.0.0.1:\(front)/test.opus" && played["paused"] as? Bool == false)
            #expect(played["label"] as? String == "Listen to Test Radio")
        }

        /// A DJ's headers reach the page (a station that sets no name or link shows the source's): a quote followed
        /// by a combining mark once broke out of `aria-label` and `href`, and Chromium ran the injected handler. The
        /// page is escaped by scalars and sent with a Content-Security-Policy; Chromium's title stays the page's.
        @Test func aSourcesHeadersCannotRunScriptOnThePage() throws {
            let station = try ServedStation(["--source-password", "hostile-dj-1"])
            defer { station.stop() }
            let hostile = "X\"\u{301} autofocus tabindex=1 onfocus=document.title=location.port y=\"\u{301}"
            let link =
                "https://x.example/\"\u{301} autofocus tabindex=2 onfocus=document.title=location.port y=\"\u{301}"
            let source = try ServerProcessTests.LiveSourceProtocolTests.RawSource(
                port: station.http, path: "/test", password: "hostile-dj-1",
                fields: [
                    "Content-Type: audio/mpeg", "Expect: 100-continue", "ice-name: \(hostile)", "ice-url: \(link)",
                ])
            defer { source.client.close() }
            #expect(source.answer.hasPrefix("HTTP/1.1 100 Continue"), "\(source.answer)")
            source.send(try ServerProcessTests.LiveSourceProtocolTests.mp3(880, seconds: 8))
            try #require(waitUntil(8) { (try? station.station())?.playingInput == "live" })

            let page = try httpGet(station.http, "/")
            #expect(page.status == 200)
            #expect(page.head.contains("Content-Security-Policy: default-src 'self'"), "\(page.head)")
            #expect(page.text.contains("aria-label=\"Listen to X&quot;\u{301} autofocus tabindex=1"), "\(page.text)")
            #expect(!page.text.contains("onfocus=document.title=location.port y=\""), "\(page.text)")
            let profile = temporaryPath("chromium-dom")
            try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: profile) }
            let dom = try run(
                try #require(tool("chromium")),
                [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile)",
                    "--timeout=4000", "--dump-dom", "http://127.0.0.1:\(station.http)/",
                ])
            let title = dom.stdout.components(separatedBy: "<title>").dropFirst().first?
                .components(separatedBy: "</title>").first
            print("Chromium's title of the page with a hostile ice-name: \(title ?? "(none)")")
            #expect(dom.status == 0 && title == "radio-relay", "\(dom.stderr.suffix(2000))")
        }
    }
}
