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
/// | another path | 404 |
/// | another method | 405 with `Allow: GET, HEAD` |
/// | a malformed head | 400; too long: 414 (request line) or 431 (head) |
/// | `Host` not this server's (`StatusAccess`), but for `/health` and `/` | 421 |
/// | no or a wrong bearer token where `status_token` is set, for `/status.json` and `/metrics` | 401 |
enum StatusRouter {
    static let paths = ["/status.json", "/metrics", "/health"]

    static func respond(
        to head: HTTPRequestHead.Result, access: StatusAccess = StatusAccess(), snapshot: () -> StatusSnapshot
    ) -> HTTPResponse {
        let request: HTTPRequestHead.Request
        switch head.opening(HTTPResponse.text) {
        case .answer(let answer): return answer
        case .request(let parsed): request = parsed
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
}
