@testable import RadioRelay
@testable import RadioRelayNet
@testable import RadioRelaySystem

extension StatusRouter {
    /// The answer to a request that is not a command to a station (the reports, the health, the access rules); a
    /// command is answered 500 here, so a test that meant a report sees it.
    static func respond(
        to head: HTTPRequestHead.Result, access: StatusAccess = StatusAccess(), snapshot: () -> StatusSnapshot
    ) -> HTTPResponse {
        switch route(head, access: access, snapshot: snapshot) {
        case .respond(let response): response
        case .command(let wanted): HTTPResponse.text(500, "a command: \(wanted.command)\n")
        }
    }
}
