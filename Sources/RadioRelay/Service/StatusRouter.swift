import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What the status endpoint answers to a parsed request head, as a pure function of an ordered table of `routes`
/// (methods, a path, a report or a command): the snapshot is taken (through the closure) only for a request that
/// reports it; what no route takes has one answer (`unrouted`). Every response closes the connection
/// (`Connection: close`).
///
/// | request | answer |
/// |---|---|
/// | `GET`/`HEAD /status.json` | 200, `application/json` (`StatusReport.json`) |
/// | `GET`/`HEAD /metrics` | 200, Prometheus text 0.0.4 (`MetricsReport.text`) |
/// | `GET`/`HEAD /health` | 200 when every station is alive, 503 otherwise, with a short text |
/// | `GET`/`HEAD /` | 200, a list of the above |
/// | `POST /stations/NAME/force/INPUT` | 200: the station plays that input until released or until it fails |
/// | `POST /stations/NAME/release` | 200: the force is released, the rules choose again |
/// | `POST /stations/NAME/killsource`, `GET`/`POST /admin/killsource?mount=/NAME` | 200: the live source is ended |
/// | any of the three when the station cannot (no such input, no source on the air) | 404 with why |
/// | any of the three when the station does not answer within 2 s (a command is answered by its pipeline) | 503 |
/// | another path | 404 |
/// | another method | 405 with `Allow: GET, HEAD` (`POST` on the paths above) |
/// | a `POST` with `Origin` or `Sec-Fetch-Site` (a browser's, which a web page can send cross-site) | 403 |
/// | a malformed head | 400; too long: 414 (request line) or 431 (head) |
/// | `Host` not this server's (`StatusAccess`), but for `/health` and `/` | 421 |
/// | no or a wrong bearer token where `status_token` is set, for `/status.json`, `/metrics` and the `POST`s | 401 |
enum StatusRouter {
    static let paths = ["/status.json", "/metrics", "/health"]

    /// An operator's command for a station: `station` is its name, or a mount path for Icecast's
    /// `/admin/killsource?mount=/NAME`.
    struct StationRequest: Equatable, Sendable {
        var station: String
        var command: StationCommand
    }

    /// What the endpoint does with a request: answer it now, or send a command to a station and answer its outcome
    /// (`commandAnswer`).
    enum Action {
        case respond(HTTPResponse)
        case command(StationRequest)
    }

    /// The answer to a request: now, or once the station answered the command (`commandAnswer`).
    enum Answer {
        case now(HTTPResponse)
        case awaiting(CommandTicket)

        /// As the status loop sends it.
        var bytes: StatusAnswer {
            switch self {
            case .now(let response): .now(response.encoded)
            case .awaiting(let ticket): .awaiting(ticket) { commandAnswer($0).encoded }
            }
        }
    }

    /// The answer to `head`, with commands carried out by `dispatch` (the responder's: a ticket, or why not).
    static func answer(
        _ head: HTTPRequestHead.Result, access: StatusAccess = StatusAccess(), snapshot: () -> StatusSnapshot,
        listing: (inout StatusSnapshot) -> Void = { _ in },
        dispatch: (StationRequest) -> Result<CommandTicket, ConfigurationError>
    ) -> Answer {
        switch route(head, access: access, snapshot: snapshot, listing: listing) {
        case .respond(let response):
            return .now(response)
        case .command(let wanted):
            switch dispatch(wanted) {
            case .success(let ticket): return .awaiting(ticket)
            case .failure(let error): return .now(HTTPResponse.text(404, "\(error.message)\n"))
            }
        }
    }

    /// A command's outcome as the operator gets it: 200 with what was done, 404 with why it could not be, 503 when
    /// the station did not answer within `HTTPConnectionLoop.replyTimeout`.
    static func commandAnswer(_ outcome: CommandOutcome?) -> HTTPResponse {
        switch outcome {
        case .done(let text): .text(200, text + "\n")
        case .refused(let text): .text(404, text + "\n")
        case nil:
            .text(
                503, "the station did not answer within \(wholeSeconds(HTTPConnectionLoop.replyTimeout)) s: try again\n"
            )
        }
    }

    /// One route of the status endpoint: the methods it takes, and what it is — a report (answered from a snapshot,
    /// behind the access rules) or a command (a `StationRequest` parsed from the path, behind the rules that keep a
    /// web page out too).
    struct Route: Sendable {
        enum Kind: Sendable {
            /// `answer` gets the snapshot, and what adds the listener list to one (only `/status.json` lists).
            case report(
                path: String,
                answer:
                    @Sendable (HTTPRequestHead.Request, () -> StatusSnapshot, (inout StatusSnapshot) -> Void) ->
                    HTTPResponse)
            case command(@Sendable (HTTPRequestHead.Request) -> StationRequest?)
        }

        var name: String
        var methods: [String]
        var kind: Kind

        /// Whether the request's path is this route's, and the command it asks for, when it is a command route.
        func match(_ request: HTTPRequestHead.Request) -> (Bool, StationRequest?) {
            switch kind {
            case .report(let path, _): return (request.path == path, nil)
            case .command(let parse):
                let wanted = parse(request)
                return (wanted != nil, wanted)
            }
        }
    }

    /// The routes, in order; what none takes is answered by `unrouted`.
    static let routes: [Route] = [
        Route(
            name: "status", methods: ["GET", "HEAD"],
            kind: .report(path: "/status.json") { _, snapshot, listing in
                var current = snapshot()
                listing(&current)
                return HTTPResponse(status: 200, contentType: "application/json", body: StatusReport.json(current))
            }),
        Route(
            name: "metrics", methods: ["GET", "HEAD"],
            kind: .report(path: "/metrics") { _, snapshot, _ in
                HTTPResponse(status: 200, contentType: MetricsReport.contentType, body: MetricsReport.text(snapshot()))
            }),
        Route(
            name: "health", methods: ["GET", "HEAD"],
            kind: .report(path: "/health") { _, snapshot, _ in
                let current = snapshot()
                return .text(current.isHealthy ? 200 : 503, StatusReport.health(current))
            }),
        Route(
            name: "index", methods: ["GET", "HEAD"],
            kind: .report(path: "/") { _, _, _ in
                .text(200, "radio-relay \(RadioRelayVersion.string)\n" + paths.joined(separator: "\n") + "\n")
            }),
        Route(
            name: "force", methods: ["POST"],
            kind: .command { stationRequest($0.path).flatMap { if case .force = $0.command { $0 } else { nil } } }),
        Route(
            name: "release", methods: ["POST"],
            kind: .command { stationRequest($0.path).flatMap { $0.command == .release ? $0 : nil } }),
        Route(
            name: "killsource", methods: ["POST"],
            kind: .command {
                $0.path.hasPrefix("/stations/")
                    ? stationRequest($0.path).flatMap { $0.command == .killSource ? $0 : nil } : nil
            }),
        // Icecast's call is a GET; with the status token instead of the source's credentials.
        Route(
            name: "admin killsource", methods: ["GET", "POST"],
            kind: .command { $0.path == "/admin/killsource" ? stationRequest($0.path, query: $0.query) : nil }),
    ]

    /// - Parameter listing: adds the listener list to a snapshot (`/status.json` only: the list is read and sorted
    ///   for no other report).
    static func route(
        _ head: HTTPRequestHead.Result, access: StatusAccess = StatusAccess(), snapshot: () -> StatusSnapshot,
        listing: (inout StatusSnapshot) -> Void = { _ in }
    ) -> Action {
        let request: HTTPRequestHead.Request
        switch head.opening(HTTPResponse.text) {
        case .answer(let answer): return .respond(answer)
        case .request(let parsed): request = parsed
        }
        for route in routes {
            let (matches, wanted) = route.match(request)
            guard matches else { continue }
            guard route.methods.contains(request.method) else {
                var response = HTTPResponse.text(405, "only \(route.methods.joined(separator: " and "))\n")
                response.headers.append(("Allow", route.methods.joined(separator: ", ")))
                response.omitsBody = request.method == "HEAD"
                return .respond(response)
            }
            switch route.kind {
            case .report(_, let answer):
                if let refusal = refusal(request, access: access) { return .respond(refusal) }
                var response = answer(request, snapshot, listing)
                response.omitsBody = request.method == "HEAD"
                return .respond(response)
            case .command:
                guard let wanted else { break }
                return command(request, wanting: wanted, access: access)
            }
        }
        return .respond(unrouted(request, access: access))
    }

    /// The one answer to what no route takes: 405 for a method other than `GET` and `HEAD`, else (past the access
    /// rules, so that a path cannot be probed without them) 404.
    static func unrouted(_ request: HTTPRequestHead.Request, access: StatusAccess) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPResponse.text(405, "only GET and HEAD\n")
            response.headers.append(("Allow", "GET, HEAD"))
            return response
        }
        var response =
            refusal(request, access: access) ?? .text(404, "not found; try \(paths.joined(separator: ", "))\n")
        response.omitsBody = request.method == "HEAD"
        return response
    }

    /// The access rules' refusal of a report (421 for another Host, 401 without the token), or nil.
    static func refusal(_ request: HTTPRequestHead.Request, access: StatusAccess) -> HTTPResponse? {
        var response: HTTPResponse
        switch access.decide(request) {
        case .allowed: return nil
        case .wrongHost:
            response = .text(421, "this server does not answer for that Host\n")
        case .unauthorized:
            response = .text(401, "a bearer token is required\n")
            response.headers.append(("WWW-Authenticate", "Bearer realm=\"radio-relay\""))
        }
        response.omitsBody = request.method == "HEAD"
        return response
    }

    /// The command a path asks for: `/stations/NAME/force/INPUT`, `/stations/NAME/release`,
    /// `/stations/NAME/killsource`, or Icecast's `/admin/killsource?mount=/NAME`.
    static func stationRequest(_ path: String, query: String? = nil) -> StationRequest? {
        if path == "/admin/killsource" {
            // Icecast's call, with the status token instead of the source's credentials: `mount=/NAME`.
            let mount = SourceRules.mount(inQuery: query) ?? ""
            return StationRequest(station: mount, command: .killSource)
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].isEmpty, parts[1] == "stations", !parts[2].isEmpty else { return nil }
        let station = String(parts[2])
        if parts.count == 4 && parts[3] == "release" { return StationRequest(station: station, command: .release) }
        if parts.count == 4 && parts[3] == "killsource" {
            return StationRequest(station: station, command: .killSource)
        }
        if parts.count == 5 && parts[3] == "force" && !parts[4].isEmpty {
            return StationRequest(station: station, command: .force(input: String(parts[4])))
        }
        return nil
    }

    private static func command(
        _ request: HTTPRequestHead.Request, wanting wanted: StationRequest, access: StatusAccess
    ) -> Action {
        // A web page can make a browser send a simple POST anywhere, the operator's own machine included; browsers
        // say where a request comes from, tools do not.
        if request.field("origin") != nil || request.field("sec-fetch-site") != nil {
            return .respond(.text(403, "requests from web pages are refused: use curl -X POST or the like\n"))
        }
        switch access.decide(request) {
        case .allowed: return .command(wanted)
        case .wrongHost: return .respond(.text(421, "this server does not answer for that Host\n"))
        case .unauthorized:
            var response = HTTPResponse.text(401, "a bearer token is required\n")
            response.headers.append(("WWW-Authenticate", "Bearer realm=\"radio-relay\""))
            return .respond(response)
        }
    }
}
