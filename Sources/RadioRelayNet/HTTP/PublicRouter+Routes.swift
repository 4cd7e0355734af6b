import RadioRelayMedia
import RadioRelaySystem

/// The public address's routes, in order: the first whose path matches and whose methods include the request's
/// answers. Built once; a route that depends on the stations (a mount, an HLS directory) looks at the request's
/// `PublicDirectory`.
///
/// | route | methods | path |
/// |---|---|---|
/// | `source` | any (only where a station takes live sources) | `PUT`/`SOURCE` anywhere |
/// | `admin page` | `GET`, `HEAD` | `/admin`: 301 to `/admin/` |
/// | `admin` | any | `/admin/…` (Icecast's admin API: `HTTPFrontLoop+Admin`; the admin page at `/admin/` itself) |
/// | `preflight` | `OPTIONS` | any |
/// | `stream` | `GET`, `HEAD` | a mount (`/NAME.opus`, a rendition's, `/NAME.mp3`) |
/// | `page events` | `GET`, `HEAD` | `/events` |
/// | `events` | `GET`, `HEAD` | `/NAME/events` |
/// | `playlist` | `GET`, `HEAD` | a mount and `.m3u`, `.pls`, `.xspf` |
/// | `icecast status` | `GET`, `HEAD` | `/status-json.xsl` |
/// | `archive hls` | `GET`, `HEAD` | `/NAME/archive.m3u8`, `archive-init.mp4`, `archive-SECONDS.m4s`; `archive-ts.m3u8`, `archive-SECONDS.ts` (with an archive) |
/// | `archive` | `GET`, `HEAD` | `/NAME/archive.json` of a station with an archive (before the HLS directory) |
/// | `history` | `GET`, `HEAD` | `/NAME/history.json` (before the HLS directory of the same name) |
/// | `hls` | `GET`, `HEAD` | under `/NAME/` |
/// | `page` | `GET`, `HEAD` | `/`, `/index.html` |
/// | `page files` | `GET`, `HEAD` | `/station-page.css`, `/station-page.js` |
extension PublicRouter {
    /// One route: its name (for tests and logs), the methods it takes (empty: any), whether an HTTP/1.1 request
    /// needs a `Host` for it, what it finds in a request (nil: not its path), and its answer.
    package struct Route: Sendable {
        package struct Context {
            package var request: HTTPRequestHead.Request
            package var directory: PublicDirectory
            package var now: Double
            package var host: String
            var isHead: Bool { request.method == "HEAD" }
        }

        /// What a route's path match found.
        package enum Capture {
            case path
            case mount(Int)
            case hls(Int, Substring)
            case playlist(Int, Playlists.Kind)
            case history(station: String, history: SongHistory)
            case archive(station: String, name: String)
        }

        package var name: String
        package var methods: [String]
        package var needsHost = true
        package var match: @Sendable (HTTPRequestHead.Request, PublicDirectory) -> Capture?
        package var answer: @Sendable (Context, Capture) -> Action
    }

    static let readMethods = ["GET", "HEAD"]

    /// An archive's resources are answered where the admission point can screen them (`HTTPFrontLoop+Archive`).
    static let archiveAnswer: @Sendable (Route.Context, Route.Capture) -> Action = { context, capture in
        guard case .archive(let station, let name) = capture else { return .respond(text(404, "no archive\n")) }
        return .archive(station: station, name: name, request: context.request)
    }

    package static let routes: [Route] = [
        Route(
            name: "source", methods: [], needsHost: false,
            match: { request, directory in
                let source = request.method == "PUT" || request.method == "SOURCE"
                return source && directory.takesSources ? .path : nil
            },
            answer: { context, _ in .source(context.request) }),
        Route(
            name: "admin page", methods: readMethods,
            match: { request, _ in request.path == "/admin" ? .path : nil },
            answer: { context, _ in
                // The admin page's path (`AdminPage.path`).
                var response = text(301, "see /admin/\n")
                response.headers.append(("Location", "/admin/"))
                response.omitsBody = context.isHead
                return .respond(response)
            }),
        Route(
            name: "admin", methods: [], needsHost: false,
            match: { request, _ in request.path.hasPrefix("/admin/") ? .path : nil },
            answer: { context, _ in .admin(context.request) }),
        Route(
            name: "preflight", methods: ["OPTIONS"], match: { _, _ in .path },
            answer: { context, _ in
                var response = preflight(context.request)
                if context.directory.takesSources {
                    response.headers.append(("Allow", allowedMethods + ", PUT, SOURCE"))
                }
                return .respond(response)
            }),
        Route(
            name: "stream", methods: readMethods,
            match: { request, directory in directory.mount(at: request.path).map { .mount($0) } },
            answer: { context, capture in
                guard case .mount(let index) = capture else { return .respond(text(404, "no mount\n")) }
                let mount = context.directory.mounts[index]
                // A time-shifted listener (`?start=`, `?offset=`) is served from the archive: no titles in band.
                let shift = TimeShiftStart.parse(SourceRules.parameters(context.request.query))
                if case .failure(let error) = shift { return .respond(text(400, error.reason + "\n")) }
                let titles = mount.format == .mp3 && context.request.field("icy-metadata") == "1" && shift == nil
                let interval = titles ? ICYMetadataBlock.interval : 0
                let head = streamHead(mount, metaInterval: interval)
                guard !context.isHead else { return .respond(HTTPResponse(rawHead: head)) }
                var request = listenerRequest(context.request, metaInterval: interval)
                if case .success(let start) = shift { request.timeShift = start }
                return .stream(mount: index, head: head, request: request)
            }),
        Route(
            name: "page events", methods: readMethods,
            match: { request, directory in
                request.path == IndexPage.eventsPath && !directory.mounts.isEmpty ? .path : nil
            },
            answer: { context, _ in
                let head = eventsHead()
                return context.isHead
                    ? .respond(HTTPResponse(rawHead: head))
                    : .pageEvents(head: head, request: listenerRequest(context.request, metaInterval: 0))
            }),
        Route(
            name: "events", methods: readMethods,
            match: { request, directory in directory.events(at: request.path).map { .mount($0) } },
            answer: { context, capture in
                guard case .mount(let index) = capture else { return .respond(text(404, "no mount\n")) }
                let head = eventsHead()
                return context.isHead
                    ? .respond(HTTPResponse(rawHead: head))
                    : .events(mount: index, head: head, request: listenerRequest(context.request, metaInterval: 0))
            }),
        Route(
            name: "playlist", methods: readMethods,
            match: { request, directory in
                Playlists.playlist(at: request.path, in: directory).map { .playlist($0.mount, $0.kind) }
            },
            answer: { context, capture in
                guard case .playlist(let index, let kind) = capture else { return .respond(text(404, "no mount\n")) }
                let base = Playlists.base(context.request, directory: context.directory, fallbackHost: context.host)
                return .respond(
                    Playlists.response(kind, mount: context.directory.mounts[index], base: base, head: context.isHead))
            }),
        Route(
            name: "icecast status", methods: readMethods,
            match: { request, _ in request.path == IcecastStatus.path ? .path : nil },
            answer: { context, _ in
                .respond(
                    IcecastStatus.response(context.request, directory: context.directory, fallbackHost: context.host))
            }),
        Route(
            name: "archive hls", methods: readMethods,
            match: { request, directory in
                // `/NAME/RESOURCE`: exactly two parts, neither empty.
                let parts = request.path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
                guard parts.count == 3, parts[0].isEmpty, !parts[1].isEmpty,
                    let station = String(parts[1]), let name = String(parts[2])
                else { return nil }
                guard directory.archives[station] != nil, name.hasPrefix("archive"),
                    ArchivePlaylist.Container(playlist: name) != nil || name == ArchivePlaylist.initName
                        || ArchivePlaylist.segment(Substring(name)) != nil
                else { return nil }
                return .archive(station: station, name: name)
            },
            answer: archiveAnswer),
        Route(
            name: "archive", methods: readMethods,
            match: { request, directory in
                guard request.path.hasPrefix("/"), request.path.hasSuffix("/archive.json") else { return nil }
                let name = String(request.path.dropFirst().dropLast("/archive.json".utf8.count))
                return directory.archives[name] != nil ? .archive(station: name, name: "archive.json") : nil
            },
            answer: archiveAnswer),
        Route(
            name: "history", methods: readMethods,
            match: { request, directory in
                directory.history(at: request.path).map { .history(station: $0.station, history: $0.history) }
            },
            answer: { context, capture in
                guard case .history(let station, let history) = capture else {
                    return .respond(text(404, "no mount\n"))
                }
                // With an archive, each entry it holds has the URL that plays it from its start.
                let archive = context.directory.archives[station]
                let range = archive?.service.index().range
                let entries = history.json { entry in
                    let millis = Int64(entry.started * 1000)
                    guard let archive, let range, range.contains(millis) else { return nil }
                    return ArchiveListing.listen(archive.mount, from: millis)
                }
                let body = "{\"station\":\(JSONText.string(station)),\"history\":\(entries)}\n"
                var response = HTTPResponse(
                    status: 200, contentType: "application/json", bytes: Array(body.utf8),
                    headers: [("Access-Control-Allow-Origin", "*"), ("Cache-Control", "public, max-age=5")])
                response.omitsBody = context.isHead
                return .respond(response)
            }),
        Route(
            name: "hls", methods: readMethods,
            match: { request, directory in directory.hls(at: request.path).map { .hls($0.mount, $0.name) } },
            answer: { context, capture in
                guard case .hls(let index, let name) = capture else { return .respond(text(404, "no mount\n")) }
                let response = hls(
                    context.request, directory: context.directory, mount: index, name: name, now: context.now)
                return .hls(
                    mount: index, response: response, request: listenerRequest(context.request, metaInterval: 0))
            }),
        Route(
            name: "page", methods: readMethods,
            match: { request, _ in request.path == "/" || request.path == "/index.html" ? .path : nil },
            answer: { context, _ in
                var response = HTTPResponse(
                    status: 200, contentType: "text/html; charset=utf-8", body: IndexPage.html(context.directory))
                response.headers += [
                    ("Access-Control-Allow-Origin", "*"), ("Content-Security-Policy", IndexPage.contentSecurityPolicy),
                    ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
                ]
                response.omitsBody = context.isHead
                return .respond(response)
            }),
        Route(
            name: "page files", methods: readMethods,
            match: { request, _ in
                request.path == IndexPage.stylePath || request.path == IndexPage.scriptPath ? .path : nil
            },
            answer: { context, _ in
                let css = context.request.path == IndexPage.stylePath
                var response = HTTPResponse(
                    status: 200, contentType: css ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8",
                    bytes: Array((css ? IndexPage.style : IndexPage.script).utf8),
                    headers: [("Cache-Control", "public, max-age=300"), ("X-Content-Type-Options", "nosniff")])
                response.omitsBody = context.isHead
                return .respond(response)
            }),
    ]
}
