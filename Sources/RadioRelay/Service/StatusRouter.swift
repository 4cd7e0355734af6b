import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What the status endpoint answers to a parsed request head, as a pure function: the snapshot is taken (through
/// the closure) only for a request that reports it. Every response closes the connection (`Connection: close`).
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
/// | another path | 404 |
/// | another method | 405 with `Allow: GET, HEAD` (`POST` on the paths above) |
/// | a `POST` with `Origin` or `Sec-Fetch-Site` (a browser's, which a web page can send cross-site) | 403 |
/// | a malformed head | 400; too long: 414 (request line) or 431 (head) |
/// | `Host` not this server's (`StatusAccess`), but for `/health` and `/` | 421 |
/// | no or a wrong bearer token where `status_token` is set, for `/status.json`, `/metrics` and the `POST`s | 401 |
enum StatusRouter {
    static let paths = ["/status.json", "/metrics", "/health"]

    /// An operator's request about a station's inputs: force `input`, or release the force (`input` nil).
    struct InputControl: Equatable, Sendable {
        var station: String
        var input: String?
        /// End the live source on the air (`killsource`); `station` may then be a mount path (`/admin/killsource`).
        var killsSource = false
    }

    /// What carries out an `InputControl`: the text of the answer, or why it cannot be done (404).
    typealias Control = (InputControl) -> Result<String, ConfigurationError>

    static func respond(
        to head: HTTPRequestHead.Result, access: StatusAccess = StatusAccess(), snapshot: () -> StatusSnapshot,
        control: Control = { _ in .failure(ConfigurationError("no stations")) }
    ) -> HTTPResponse {
        let request: HTTPRequestHead.Request
        switch head.opening(HTTPResponse.text) {
        case .answer(let answer): return answer
        case .request(let parsed): request = parsed
        }
        if let wanted = inputControl(request.path, query: request.query) {
            return respond(to: request, wanting: wanted, access: access, control: control)
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPResponse.text(405, "only GET and HEAD\n")
            response.headers.append(("Allow", "GET, HEAD"))
            return response
        }
        var response: HTTPResponse
        switch access.decide(request) {
        case .allowed: break
        case .wrongHost:
            response = .text(421, "this server does not answer for that Host\n")
            response.omitsBody = request.method == "HEAD"
            return response
        case .unauthorized:
            response = .text(401, "a bearer token is required\n")
            response.headers.append(("WWW-Authenticate", "Bearer realm=\"radio-relay\""))
            response.omitsBody = request.method == "HEAD"
            return response
        }
        switch request.path {
        case "/status.json":
            response = HTTPResponse(status: 200, contentType: "application/json", body: StatusReport.json(snapshot()))
        case "/metrics":
            response = HTTPResponse(
                status: 200, contentType: MetricsReport.contentType, body: MetricsReport.text(snapshot()))
        case "/health":
            let current = snapshot()
            response = .text(current.isHealthy ? 200 : 503, StatusReport.health(current))
        case "/":
            response = .text(200, "radio-relay \(RadioRelayVersion.string)\n" + paths.joined(separator: "\n") + "\n")
        default:
            response = .text(404, "not found; try \(paths.joined(separator: ", "))\n")
        }
        response.omitsBody = request.method == "HEAD"
        return response
    }

    /// The input control a path asks for: `/stations/NAME/force/INPUT` or `/stations/NAME/release`.
    static func inputControl(_ path: String, query: String? = nil) -> InputControl? {
        if path == "/admin/killsource" {
            // Icecast's call, with the status token instead of the source's credentials: `mount=/NAME`.
            let mount = SourceRules.mount(inQuery: query) ?? ""
            return InputControl(station: mount, input: nil, killsSource: true)
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].isEmpty, parts[1] == "stations", !parts[2].isEmpty else { return nil }
        let station = String(parts[2])
        if parts.count == 4 && parts[3] == "release" { return InputControl(station: station, input: nil) }
        if parts.count == 4 && parts[3] == "killsource" {
            return InputControl(station: station, input: nil, killsSource: true)
        }
        if parts.count == 5 && parts[3] == "force" && !parts[4].isEmpty {
            return InputControl(station: station, input: String(parts[4]))
        }
        return nil
    }

    private static func respond(
        to request: HTTPRequestHead.Request, wanting wanted: InputControl, access: StatusAccess, control: Control
    ) -> HTTPResponse {
        // Icecast's `/admin/killsource` is a GET; the same rules keep a web page from calling it.
        guard request.method == "POST" || (wanted.killsSource && request.method == "GET") else {
            var response = HTTPResponse.text(405, "only POST\n")
            response.headers.append(("Allow", "POST"))
            response.omitsBody = request.method == "HEAD"
            return response
        }
        // A web page can make a browser send a simple POST anywhere, the operator's own machine included; browsers
        // say where a request comes from, tools do not.
        if request.field("origin") != nil || request.field("sec-fetch-site") != nil {
            return .text(403, "requests from web pages are refused: use curl -X POST or the like\n")
        }
        switch access.decide(request) {
        case .allowed: break
        case .wrongHost: return .text(421, "this server does not answer for that Host\n")
        case .unauthorized:
            var response = HTTPResponse.text(401, "a bearer token is required\n")
            response.headers.append(("WWW-Authenticate", "Bearer realm=\"radio-relay\""))
            return response
        }
        switch control(wanted) {
        case .success(let text): return .text(200, text + "\n")
        case .failure(let error): return .text(404, "\(error.message)\n")
        }
    }
}
