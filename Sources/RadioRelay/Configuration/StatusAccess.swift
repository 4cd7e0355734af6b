import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// A bearer token that protects `/status.json` and `/metrics` (`[server] status_token`, `@credential:NAME`
/// allowed). A secret: it prints as `***`, never as itself.
package struct StatusToken: Sendable, Equatable, CustomStringConvertible {
    fileprivate let bytes: [UInt8]

    /// 16 to 256 visible ASCII characters (no spaces); nil otherwise.
    package init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard (16...256).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        self.bytes = bytes
    }

    package static let accepts = "16 to 256 visible ASCII characters (no spaces), or @credential:NAME"

    package var description: String { "***" }

    /// Whether `candidate` is the token, in time that does not depend on where they differ.
    func matches(_ candidate: some Collection<UInt8>) -> Bool { secretMatches(bytes, candidate) }
}

/// Who may read the status endpoint, as a pure value (`StatusRouter` asks it; tests: `StatusAccessTests`):
///
/// - **DNS rebinding**: a request whose `Host` names neither an IP literal (a literal cannot be rebound: a browser
///   sends it only to the address it names), `localhost`, nor one of the configured `status_hosts` is refused 421.
///   Without this, a web page on the operator's machine could point a name of its own at 127.0.0.1 and read
///   `/status.json` as same-origin. A request without `Host` (HTTP/1.0, as HAProxy's health checks send) passes.
/// - **Token**: with `status_token`, `/status.json` and `/metrics` want `Authorization: Bearer TOKEN` (else 401), or
///   the admin's credentials as HTTP Basic (`admin_user`, `admin_password`).
/// - `/health` and `/` are open to all: a balancer's health check needs nothing but the address.
package struct StatusAccess: Sendable, Equatable {
    package var token: StatusToken?
    /// Host names (lowercase) a request may name besides IP literals and `localhost`.
    package var names: [String]
    /// The admin's account (`admin_user`, `admin_password`): its HTTP Basic credentials pass where the token does.
    package var admin: AdminCredentials?

    package init(token: StatusToken? = nil, names: [String] = []) {
        self.token = token
        self.names = names.map { $0.lowercased() }
    }

    /// Paths anyone may read, whatever their Host or token.
    static let openPaths: Set<String> = ["/health", "/"]

    package enum Decision: Equatable, Sendable {
        case allowed
        /// 421 Misdirected Request: the Host is not this server's.
        case wrongHost
        /// 401 with `WWW-Authenticate: Bearer`.
        case unauthorized
    }

    func decide(_ request: HTTPRequestHead.Request) -> Decision {
        if Self.openPaths.contains(request.path) { return .allowed }
        if let host = request.host, !allowsHost(host) { return .wrongHost }
        guard let token else { return .allowed }
        guard let authorization = request.field("authorization") else { return .unauthorized }
        if let admin, let credentials = ListenerCredentials.basic(authorization), admin.accepts(credentials) {
            return .allowed
        }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer", token.matches(parts[1].utf8) else {
            return .unauthorized
        }
        return .allowed
    }

    /// Whether a `Host` value (`name`, `name:port`, `[v6]:port`, an IP literal) names this server.
    func allowsHost(_ value: String) -> Bool {
        guard let (host, _) = HostPort.split(Substring(value)) else { return false }
        if value.hasPrefix("[") { return Self.isAddress(String(host), family: AF_INET6) }
        let name = host.lowercased()
        if name.hasSuffix(".") { return allowsHost(String(name.dropLast())) && !name.hasSuffix("..") }
        if Self.isAddress(name, family: AF_INET) { return true }
        return name == "localhost" || names.contains(name)
    }

    private static func isAddress(_ text: String, family: Int32) -> Bool {
        var buffer = in6_addr()
        return inet_pton(family, text, &buffer) == 1
    }
}
