import Foundation
import FoundationXML
import Glibc
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: one real peer at a time.
extension PeerTests {
    /// The admin page in Chromium, driven through the DevTools protocol (`DevToolsPipe`): screenshots at 1280 and
    /// 390 px, a kick and a move done through the page's own forms (the listeners are curl processes, checked from
    /// outside), and the same kick form posted with the page's cookie and token from another site refused 403.
    @Suite(
        .timeLimit(.minutes(2)),
        .enabled(if: tool("chromium") != nil && tool("curl") != nil, "needs chromium and curl (`.ci/deps --test`)")
    )
    struct AdminPageBrowserTests {
        static let password = "page-admin-1"
        static let auth = "Basic " + Data("admin:\(password)".utf8).base64EncodedString()

        /// A curl listener of `mount` with this user agent, until it is closed or killed.
        static func listener(_ http: UInt16, _ mount: String, agent: String) throws -> Process {
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: try #require(tool("curl")))
            curl.arguments = ["-s", "-N", "-A", agent, "-o", "/dev/null", "http://127.0.0.1:\(http)\(mount)"]
            curl.standardOutput = FileHandle.nullDevice
            curl.standardError = FileHandle.nullDevice
            try curl.run()
            return curl
        }

        /// `listclients` of `mount`: each listener's ID and user agent.
        static func listed(_ http: UInt16, _ mount: String) throws -> [(id: String, agent: String)] {
            let answer = try httpFetch(
                http,
                "GET /admin/listclients?mount=\(mount) HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: \(auth)\r\n\r\n")
            let document = try XMLDocument(data: Data(answer.body))
            return try document.nodes(forXPath: "//listener").compactMap { node in
                guard let element = node as? XMLElement, let id = element.elements(forName: "ID").first?.stringValue,
                    let agent = element.elements(forName: "UserAgent").first?.stringValue
                else { return nil }
                return (id, agent)
            }
        }

        @Test func kickAndMoveThroughThePageAndACrossSiteFormRefused() throws {
            let http = try freePort()
            let config = temporaryPath("admin-page.conf")
            defer { try? FileManager.default.removeItem(atPath: config) }
            try """
            [server]
            status = off
            http = 127.0.0.1:\(http)
            admin_password = \(Self.password)
            [station one]
            upstream = \(Fixture.path("stereo-44k-128k.mp3"))
            bind = 127.0.0.1
            port = \(try freePort())
            source_password = dj-secret-1
            [station two]
            upstream = \(Fixture.path("stereo-44k-128k.mp3"))
            bind = 127.0.0.1
            port = \(try freePort())
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let server = try ServerProcessTests.ServerProcess(arguments: ["serve", "--config", config])
            defer { server.stop() }
            // The one to kick first, so that it is the first listed.
            let kicked = try Self.listener(http, "/one.opus", agent: "kick-me <script>alert(1)</script>")
            defer { if kicked.isRunning { kill(kicked.processIdentifier, SIGKILL) } }
            #expect(waitUntil(10) { (try? Self.listed(http, "/one.opus").count) == 1 }, "\(server.log)")
            let moved = try Self.listener(http, "/one.opus", agent: "move-me")
            defer { if moved.isRunning { kill(moved.processIdentifier, SIGKILL) } }
            #expect(waitUntil(10) { (try? Self.listed(http, "/one.opus").count) == 2 }, "\(server.log)")
            let listed = try Self.listed(http, "/one.opus")
            let kickID = try #require(listed.first { $0.agent.hasPrefix("kick-me") }?.id)
            let moveID = try #require(listed.first { $0.agent == "move-me" }?.id)

            let browser = try DevToolsPipe()
            defer { browser.stop() }
            try browser.call("Network.enable")
            try browser.call("Network.setExtraHTTPHeaders", ["headers": ["Authorization": Self.auth]])
            let page = "http://127.0.0.1:\(http)/admin/"
            try browser.open(page)
            #expect(browser.evaluate("document.title") as? String == "radio-relay admin")
            let agentShown = browser.evaluate("document.querySelector('td.agent').textContent") as? String
            #expect(agentShown == "kick-me <script>alert(1)</script>", "the agent is text, not markup")

            // Screenshots: a desktop and a phone.
            let directory = temporaryPath("admin-shots")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // `KEEP_SCREENSHOTS=1` keeps them to look at (their folder is printed).
            let keep = ProcessInfo.processInfo.environment["KEEP_SCREENSHOTS"] != nil
            defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
            for (width, height) in [(1280, 900), (390, 844)] {
                let path = directory + "/admin-\(width).png"
                try browser.screenshot(width: width, height: height, to: path)
                let size = StationPageTests.pngSize(path)
                let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                print(
                    "admin page screenshot \(keep ? path + " " : "")\(width)x\(height): \(size.map { "\($0.width)x\($0.height)" } ?? "none"), \(bytes) bytes"
                )
                #expect(size?.width == width && size?.height == height && bytes > 10_000)
                // On a phone nothing is wider than the screen: the page does not scroll sideways.
                let wide = browser.evaluate("document.documentElement.scrollWidth") as? Int
                #expect(wide == width, "page width \(wide ?? 0) at a \(width) px viewport")
            }

            // A form of the page, submitted by its own button; then the line the page shows after the redirect.
            func submit(_ action: String, id: String, destination: String? = nil) -> String? {
                let pick = destination.map { "f.querySelector('select').value = '\($0)';" } ?? ""
                let clicked = browser.evaluate(
                    """
                    (() => { const f = [...document.querySelectorAll('form')].find((f) =>
                      f.querySelector('input[name=action]').value === '\(action)' &&
                      f.querySelector('input[name=id]')?.value === '\(id)');
                      if (!f) return false; \(pick) document.body.dataset.left = "yes";
                      f.querySelector('button').click(); return true; })()
                    """)
                guard clicked as? Bool == true else { return nil }
                // The next document (the page again, after the 303), once loaded.
                var line: String?
                _ = waitUntil(10) {
                    let next = """
                        document.readyState === "complete" && document.body && !document.body.dataset.left
                          ? (document.querySelector('p.flash')?.textContent ?? "") : null
                        """
                    line = browser.evaluate(next) as? String
                    return line != nil
                }
                return line
            }

            // The kick: the listener's connection is closed, and it is gone from the list.
            #expect(submit("kill", id: kickID) == "Client \(kickID) removed")
            #expect(waitUntil(5) { !kicked.isRunning }, "the kicked curl is still connected")
            #expect(try !Self.listed(http, "/one.opus").contains { $0.id == kickID })

            // The move goes through moveclients of that one listener: it is on the other mount with its ID, still
            // connected, and no longer on its first.
            let moveLine = submit("move", id: moveID, destination: "/two.opus")
            #expect(
                moveLine == "Client \(moveID) moved from /one.opus to /two.opus", "\(moveLine ?? "no line")")
            #expect(waitUntil(5) { (try? Self.listed(http, "/two.opus").contains { $0.id == moveID }) == true })
            #expect(try !Self.listed(http, "/one.opus").contains { $0.id == moveID })
            #expect(moved.isRunning, "the moved curl was disconnected")

            // The same kick form, with the page's cookie and token and the admin's credentials, from another site.
            let token = try #require(browser.evaluate("document.querySelector('input[name=token]').value") as? String)
            let cookies = try browser.call("Network.getCookies", ["urls": [page]])["cookies"] as? [[String: Any]]
            let cookie = try #require(cookies?.first { $0["name"] as? String == "rr_admin" }?["value"] as? String)
            func post(_ extra: String, auth: String = Self.auth, token: String = token) throws -> HTTPAnswer {
                let body = "token=\(token)&action=kill&mount=%2Ftwo.opus&id=\(moveID)"
                return try httpFetch(
                    http,
                    "POST /admin/ HTTP/1.1\r\nHost: 127.0.0.1:\(http)\r\nAuthorization: \(auth)\r\n"
                        + "Cookie: rr_admin=\(cookie)\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\(extra)\r\n\(body)")
            }
            // Without the admin's credentials, or with another token, the form is refused too.
            let noCredentials = try post("", auth: "Basic " + Data("admin:guess".utf8).base64EncodedString())
            #expect(noCredentials.status == 401 && noCredentials.head.contains("WWW-Authenticate: Basic"))
            let otherToken = try post("", token: String(repeating: "0", count: 32))
            #expect(otherToken.status == 403 && otherToken.text.contains("token"), "\(otherToken.text)")
            let crossSite = try post("Sec-Fetch-Site: cross-site\r\nOrigin: http://evil.example\r\n")
            #expect(crossSite.status == 403, "\(crossSite.head)")
            #expect(crossSite.text.contains("A form from another site is refused."))
            usleep(300_000)
            let stays = try Self.listed(http, "/two.opus").contains { $0.id == moveID }
            #expect(moved.isRunning && stays, "the cross-site form kicked the listener")
            // The very same request from the page's own origin is taken: only the site differed.
            let sameSite = try post("Sec-Fetch-Site: same-origin\r\nOrigin: http://127.0.0.1:\(http)\r\n")
            #expect(sameSite.status == 303 && sameSite.head.contains("Location: /admin/"), "\(sameSite.head)")
            #expect(waitUntil(5) { !moved.isRunning }, "the listener was not kicked by the same-origin form")
            #expect(server.logged("refused 403: a cross-site /admin/ request"), "\(server.log)")
        }
    }
}
