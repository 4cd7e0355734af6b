import RadioRelayMedia
import RadioRelaySystem

/// What the public HTTP address answers, decided from the request head, the directory and the time (`now`, the wall
/// clock unless given; HLS answers read their stream's snapshot under its lock and count themselves) by the first of
/// its `routes` (`PublicRouter+Routes`: methods, a path pattern, an answer; built once) whose path matches and whose
/// methods include the request's; what none takes has one answer (`unrouted`): a response to
/// send (then the connection closes, or, for HLS, is kept for the next request when the request allows it), a
/// stream to hand to the mount's station, or an event stream to keep. Every answer allows any origin (web players
/// fetch across origins). A request that announces a body (none is taken here) is never kept for another request:
/// an answer closes its connection, a stream or event subscriber's loop reads what it sends and drops it, so the body
/// is never read as a request of its own.
///
/// | request | answer |
/// |---|---|
/// | `GET /NAME.opus` | 200 `audio/ogg` head, then the stream (the station's network loop sends both) |
/// | `HEAD /NAME.opus` | the same head, no body |
/// | `GET /NAME/events` | 200 `text/event-stream`: the title now, then each change, keep-alives every 15 s |
/// | `GET /events` | the same for every station at once: `title` events of `{"STATION":"TITLE",…}` (the page's) |
/// | `GET /NAME/live.m3u8`, `master.m3u8`, segments | HLS (`PublicRouter+HLS`), the connection kept for more |
/// | `GET /NAME/history.json` | the station's last 20 titles, newest first, with UTC start and input (`SongHistory`) |
/// | `GET /NAME.opus.m3u`, `.pls`, `.xspf` (any mount and a suffix) | a playlist of the mount (`Playlists`) |
/// | `GET /status-json.xsl` | the mounts as Icecast 2.4 describes them (`IcecastStatus`) |
/// | `GET /` | an HTML page listing the mounts, an `<audio>` element each |
/// | `OPTIONS` any | 204, CORS preflight (and `Allow` with `PUT, SOURCE` when a station takes live sources) |
/// | `PUT`, `SOURCE` where a station takes live sources | the source protocol (`SourceRules`) |
/// | `/admin/…` | Icecast's admin API (`AdminGate`, `IcecastAdmin`) |
/// | `GET /admin/`, `POST /admin/` | the admin page and its forms (`AdminPage`, `HTTPFrontLoop+AdminPage`); `/admin` 301 |
/// | another path | 404 |
/// | another method | 405 with `Allow` |
/// | malformed, or HTTP/1.1 without `Host` | 400; request line too long 414, head too large 431 |
///
/// `Range` is accepted and ignored: a live stream has no byte ranges (the answer is 200 from the live point, as Icecast
/// does). `Icy-MetaData: 1` gets titles in band (`icy-metaint`) from an MP3 pass-through mount (`/NAME.mp3`); an Ogg
/// mount carries its metadata in the Ogg stream, so none is sent there.
package enum PublicRouter {
    package enum Action: Equatable, Sendable {
        /// Send; then close, or wait for the next request when the response says `keepAlive` (HLS).
        case respond(HTTPResponse)
        /// Hand the connection to mount `mount`'s station, which sends `head` then the stream (ICY-framed when
        /// `request` has a metadata interval).
        case stream(mount: Int, head: [UInt8], request: ListenerRequest)
        /// Keep the connection for mount `mount`'s title events, after `head`.
        case events(mount: Int, head: [UInt8], request: ListenerRequest)
        /// Keep the connection for every station's titles (the station page's one stream), after `head`.
        case pageEvents(head: [UInt8], request: ListenerRequest)
        /// An HLS answer of mount `mount`'s stream: sent once the player's session is admitted (`HLSSessions`).
        case hls(mount: Int, response: HTTPResponse, request: ListenerRequest)
        /// The live-source protocol (`PUT`, `SOURCE`): the front end's source desk answers it.
        case source(HTTPRequestHead.Request)
        /// An admin call (`/admin/…`): `AdminGate`, then `HTTPFrontLoop+Admin`.
        case admin(HTTPRequestHead.Request)
        /// A resource of station `station`'s archive (`archive.json`, or its HLS: `archive.m3u8`, its init or a
        /// segment): screened by the admission point, then answered by `HTTPFrontLoop+Archive` (a segment by the
        /// archive's own thread).
        case archive(station: String, name: String, request: HTTPRequestHead.Request)
    }

    package static let allowedMethods = "GET, HEAD, OPTIONS"
    /// Request headers a preflight may ask for when it names none we can echo.
    package static let allowedHeaders =
        "Icy-MetaData, Range, Accept, Accept-Encoding, Cache-Control, Content-Type, Origin"

    /// - Parameter now: the wall clock (Unix seconds), for the HLS answers' dates.
    /// - Parameter host: the address to name in URLs when the request has no usable `Host`.
    package static func route(
        _ head: HTTPRequestHead.Result, directory: PublicDirectory, now: Double = wallClockNow(), host: String = ""
    ) -> Action {
        let action = answer(head, directory: directory, now: now, host: host)
        guard case .request(let request) = head, request.hasBody else { return action }
        switch action {
        case .respond(var response):
            response.keepAlive = false
            return .respond(response)
        case .hls(let mount, var response, let listener):
            response.keepAlive = false
            return .hls(mount: mount, response: response, request: listener)
        default:
            return action
        }
    }

    /// What an HTTP listener the admission point did not admit is answered: the refusal's status and reason, or a
    /// redirect (302 with `Location`).
    package static func notAdmitted(_ decision: AdmissionDecision) -> HTTPResponse {
        switch decision {
        case .refuse(let status, let reason):
            return text(status, reason + "\n")
        case .redirect(let location):
            var response = text(302, "moved to \(location)\n")
            response.headers.append(("Location", location))
            return response
        case .admit:
            return text(503, "not admitted\n")
        }
    }

    private static func answer(
        _ head: HTTPRequestHead.Result, directory: PublicDirectory, now: Double, host: String
    ) -> Action {
        let request: HTTPRequestHead.Request
        switch head.opening(text) {
        case .answer(let answer): return .respond(answer)
        case .request(let parsed): request = parsed
        }
        // RFC 9112 §3.2: a 1.1 request without Host (or an absolute-form target) is answered with 400 — by every
        // route but the source protocol's (source clients of every age are taken as Icecast takes them).
        let hostMissing = request.version == "HTTP/1.1" && request.host == nil
        let context = Route.Context(request: request, directory: directory, now: now, host: host)
        for route in routes {
            guard let capture = route.match(request, directory) else { continue }
            if hostMissing && route.needsHost { break }
            guard route.methods.isEmpty || route.methods.contains(request.method) else { continue }
            return route.answer(context, capture)
        }
        if hostMissing { return .respond(text(400, "bad request: HTTP/1.1 needs a Host header\n")) }
        return .respond(unrouted(request, directory: directory))
    }

    /// The one answer to what no route takes: 405 with `Allow` for a method none of them takes, else 404.
    static func unrouted(_ request: HTTPRequestHead.Request, directory: PublicDirectory) -> HTTPResponse {
        guard ["GET", "HEAD", "OPTIONS"].contains(request.method) else {
            var response = text(405, "only \(allowedMethods)\n")
            response.headers.append(("Allow", allowedMethods))
            return response
        }
        let known = directory.mounts.map(\.path).joined(separator: ", ")
        var response = text(404, "no mount \(Sanitized.text(request.path, limit: 128)); mounts: \(known)\n")
        response.omitsBody = request.method == "HEAD"
        return response
    }

    /// The head of a stream's response: what Icecast sends for an Ogg mount, less what Ogg does not need; for an
    /// MP3 mount, `icy-metaint` when the listener asked for titles in band.
    package static func streamHead(_ mount: PublicDirectory.Mount, metaInterval: Int = 0) -> [UInt8] {
        var lines = [
            "HTTP/1.1 200 OK", "Content-Type: \(mount.format.contentType)", "Cache-Control: no-cache, no-store",
            "Pragma: no-cache", "Access-Control-Allow-Origin: *",
            "Access-Control-Expose-Headers: icy-name, icy-description, icy-genre, icy-url, icy-br",
            "Server: radio-relay/\(RadioRelayVersion.string)",
        ]
        let info = mount.info
        let fields = [
            ("icy-name", info.displayName), ("icy-description", info.description), ("icy-genre", info.genre),
            ("icy-url", info.url),
        ]
        for (name, value) in fields {
            guard let value, !value.isEmpty else { continue }
            lines.append("\(name): \(headerValue(value))")
        }
        if mount.bitrate > 0 { lines.append("icy-br: \(mount.bitrate / 1000)") }
        if metaInterval > 0 { lines.append("icy-metaint: \(metaInterval)") }
        lines += ["icy-pub: 0", "Connection: close"]
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// What the access log keeps of a stream request: its line (the path without its query), referrer and user
    /// agent as printable text with every URL in them redacted.
    package static func listenerRequest(_ request: HTTPRequestHead.Request, metaInterval: Int) -> ListenerRequest {
        func shown(_ value: String?) -> String? {
            value.map { Redaction.text(Sanitized.text($0, limit: 512)) }
        }
        return ListenerRequest(
            line: "\(request.method) \(Sanitized.text(request.path, limit: 512)) \(request.version)",
            referrer: shown(request.field("referer")), userAgent: shown(request.field("user-agent")),
            metaInterval: metaInterval)
    }

    package static func eventsHead() -> [UInt8] {
        let lines = [
            "HTTP/1.1 200 OK", "Content-Type: text/event-stream; charset=utf-8", "Cache-Control: no-cache, no-store",
            "Access-Control-Allow-Origin: *", "X-Accel-Buffering: no", "Connection: close",
        ]
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// A CORS preflight's answer: the methods, and the request headers it asked for when they are plain names.
    package static func preflight(_ request: HTTPRequestHead.Request) -> HTTPResponse {
        var response = HTTPResponse(status: 204, contentType: "text/plain; charset=utf-8", body: "")
        let asked = request.field("access-control-request-headers") ?? ""
        let plain = asked.utf8.count <= 512 && asked.utf8.allSatisfy { Self.isNameListByte($0) }
        response.headers += [
            ("Access-Control-Allow-Origin", "*"), ("Access-Control-Allow-Methods", allowedMethods),
            ("Access-Control-Allow-Headers", plain && !asked.isEmpty ? asked : allowedHeaders),
            ("Access-Control-Max-Age", "86400"),
        ]
        return response
    }

    package static func text(_ status: Int, _ body: String) -> HTTPResponse {
        var response = HTTPResponse.text(status, body)
        response.headers.append(("Access-Control-Allow-Origin", "*"))
        return response
    }

    /// A configured value as a header value: one line of printable text (the config file allows nothing else, and
    /// this holds whatever it is given).
    package static func headerValue(_ value: String) -> String {
        Sanitized.text(value, limit: Sanitized.headerLimit)
    }

    private static func isNameListByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ","),
            UInt8(ascii: " "):
            return true
        default:
            return false
        }
    }
}
