import Foundation
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The routers as tables: the order of their routes, which route takes each request, and the one answer to what no
/// route takes.
@Suite struct RouteTableTests {
    static func route(_ line: String, _ fields: String = "Host: x\r\n", takesSources: Bool = false)
        -> PublicRouter.Action
    {
        var directory = PublicHTTPTests.directory
        directory.takesSources = takesSources
        return PublicRouter.route(
            HTTPRequestHead.parse(Array("\(line)\r\n\(fields)\r\n".utf8), limit: 8192), directory: directory)
    }

    static func status(_ action: PublicRouter.Action) -> Int? {
        if case .respond(let response) = action { return response.status }
        return nil
    }

    @Test func thePublicRoutesInTheirOrder() {
        #expect(
            PublicRouter.routes.map(\.name) == [
                "source", "admin page", "admin", "preflight", "stream", "page events", "events", "playlist",
                "icecast status",
                "archive hls", "archive",
                "history",
                "hls",
                "page", "page files",
            ])
        #expect(PublicRouter.routes.filter { !$0.needsHost }.map(\.name) == ["source", "admin"])
    }

    @Test func eachRequestFindsItsRoute() {
        if case .stream(let mount, _, _) = Self.route("GET /news-low.opus HTTP/1.1") {
            #expect(mount == 1)
        } else {
            Issue.record("not a stream")
        }
        if case .events(let mount, _, _) = Self.route("GET /jazz/events HTTP/1.1") {
            #expect(mount == 0)
        } else {
            Issue.record("not events")
        }
        if case .pageEvents = Self.route("GET /events HTTP/1.1") {} else { Issue.record("not the page's events") }
        #expect(Self.status(Self.route("GET /jazz/live.m3u8 HTTP/1.1")) == 404, "no HLS stream in this directory")
        let (hlsDirectory, _) = PublicHLSTests.directory()
        let playlist = PublicRouter.route(
            HTTPRequestHead.parse(Array("GET /jazz/live.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n".utf8), limit: 8192),
            directory: hlsDirectory)
        if case .hls(let mount, _, let request) = playlist {
            #expect(hlsDirectory.mounts[mount].path == "/jazz.opus" && request.line == "GET /jazz/live.m3u8 HTTP/1.1")
        } else {
            Issue.record("not HLS: \(playlist)")
        }
        #expect(Self.status(Self.route("GET /jazz.opus.m3u HTTP/1.1")) == 200)
        #expect(Self.status(Self.route("GET /status-json.xsl HTTP/1.1")) == 200)
        #expect(Self.status(Self.route("GET / HTTP/1.1")) == 200)
        #expect(Self.status(Self.route("GET /station-page.css HTTP/1.1")) == 200)
        #expect(Self.status(Self.route("OPTIONS /anything HTTP/1.1")) == 204)
        // The source protocol is a route only where a station takes live sources; it needs no Host.
        if case .source(let request) = Self.route("PUT /jazz HTTP/1.1", "", takesSources: true) {
            #expect(request.path == "/jazz")
        } else {
            Issue.record("not the source protocol")
        }
        // An admin call is the admin API's, whether or not a station takes live sources, and needs no Host.
        for takesSources in [true, false] {
            if case .admin(let request) = Self.route(
                "GET /admin/metadata?mode=updinfo HTTP/1.0", "", takesSources: takesSources)
            {
                #expect(request.query == "mode=updinfo")
            } else {
                Issue.record("an admin call is the admin API's")
            }
        }
        #expect(Self.status(Self.route("PUT /jazz HTTP/1.1")) == 405)
    }

    @Test func whatNoRouteTakesHasOneAnswer() {
        for line in ["DELETE /jazz.opus HTTP/1.1", "POST / HTTP/1.1", "BREW /nope HTTP/1.1"] {
            guard case .respond(let response) = Self.route(line) else {
                Issue.record("\(line): routed")
                continue
            }
            #expect(response.status == 405 && response.headers.contains { $0 == ("Allow", "GET, HEAD, OPTIONS") })
        }
        #expect(Self.status(Self.route("GET /nope HTTP/1.1")) == 404)
        #expect(Self.status(Self.route("HEAD /nope HTTP/1.1")) == 404)
        #expect(Self.status(Self.route("GET /jazz.opus HTTP/1.1", "")) == 400, "HTTP/1.1 without Host")
        #expect(Self.status(Self.route("GET /nope HTTP/1.1", "")) == 400, "HTTP/1.1 without Host")
    }

    @Test func theStatusRoutes() {
        #expect(
            StatusRouter.routes.map(\.name) == [
                "status", "metrics", "health", "index", "force", "release", "killsource", "admin killsource",
            ])
        func action(_ method: String, _ target: String) -> StatusRouter.Action {
            let parts = target.split(separator: "?", maxSplits: 1)
            var request = HTTPRequestHead.Request(method: method, path: String(parts[0]), version: "HTTP/1.1")
            request.query = parts.count > 1 ? String(parts[1]) : nil
            return StatusRouter.route(.request(request), snapshot: { StatusSnapshot() })
        }
        func status(_ action: StatusRouter.Action) -> Int? {
            if case .respond(let response) = action { return response.status }
            return nil
        }
        for (method, target, command) in [
            ("POST", "/stations/main/force/2", StationCommand.force(input: "2")),
            ("POST", "/stations/main/release", .release), ("POST", "/stations/main/killsource", .killSource),
            ("GET", "/admin/killsource?mount=/main", .killSource),
            ("POST", "/admin/killsource?mount=main", .killSource),
        ] {
            if case .command(let wanted) = action(method, target) {
                #expect(wanted.command == command, "\(target)")
            } else {
                Issue.record("\(method) \(target): not a command")
            }
        }
        // A command route with another method: 405 with what it takes.
        guard case .respond(let wrong) = action("GET", "/stations/main/killsource") else {
            Issue.record("a GET killed a source")
            return
        }
        #expect(wrong.status == 405 && wrong.headers.contains { $0 == ("Allow", "POST") })
        #expect(status(action("PUT", "/status.json")) == 405 && status(action("DELETE", "/nope")) == 405)
        #expect(status(action("GET", "/nope")) == 404 && status(action("GET", "/health")) == 200)
        #expect(status(action("POST", "/stations/main/force/")) == 405, "not a command: a POST to a report's place")
        // Only /status.json reads the listener list (a balancer's /health and a scrape of /metrics do not).
        for (path, lists) in [("/status.json", 1), ("/health", 0), ("/metrics", 0), ("/", 0)] {
            var listed = 0
            let request = HTTPRequestHead.Request(method: "GET", path: path, version: "HTTP/1.1")
            _ = StatusRouter.route(.request(request), snapshot: { StatusSnapshot() }, listing: { _ in listed += 1 })
            #expect(listed == lists, "\(path)")
        }
    }
}
