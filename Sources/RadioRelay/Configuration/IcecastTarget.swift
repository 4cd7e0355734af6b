import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Where a station pushes its stream as an Icecast source client: `icecast://[USER]:PASSWORD@HOST[:PORT]/MOUNT`, or
/// `icecasts://…` for the same over TLS (`--push`, a station's `push = …` keys), parsed and checked once, before
/// anything connects.
///
/// USER defaults to `source` (Icecast's source user), PORT to 8000 (Icecast's default) for both schemes: Icecast has
/// no TLS port of its own (a TLS listen-socket, `<ssl>1</ssl>`, or a TLS proxy in front, is on whatever port its
/// operator picks), and source clients (butt, Liquidsoap) keep 8000 for TLS too. USER and PASSWORD may hold `%XX`
/// escapes, so that a password can contain `@`, `:` or `/`. The password never appears in `description`, which is
/// what logs, errors and `/status.json` show.
package struct IcecastTarget: Sendable, Equatable, CustomStringConvertible {
    package var user: String
    package var password: String
    /// A host name, an IPv4 literal or an IPv6 literal (without brackets).
    package var host: String
    package var port: Int
    /// The mount path with its leading slash: `/live.opus`.
    package var mount: String
    /// `icecasts://`: HTTPS, the server's certificate verified (against the station's `push_ca`, or the system's CA
    /// store).
    package var tls: Bool

    package static let scheme = "icecast://"
    package static let tlsScheme = "icecasts://"
    package static let defaultPort = 8000
    /// The form, for error messages.
    package static let form = "icecast://source:PASSWORD@HOST:PORT/MOUNT"
    static let tlsForm = "icecasts://source:PASSWORD@HOST:PORT/MOUNT"

    /// Why a push URL is refused; `message` never quotes the password.
    package struct Problem: Error, Equatable {
        package let message: String
        init(_ message: String) { self.message = message }
    }

    package init(
        user: String = "source", password: String, host: String, port: Int = defaultPort, mount: String,
        tls: Bool = false
    ) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.mount = mount
        self.tls = tls
    }

    /// Parses `text`, or throws what is wrong with it, in words that say what to write instead.
    package init(parsing text: String) throws(Problem) {
        let tls = text.lowercased().hasPrefix(Self.tlsScheme)
        guard tls || text.lowercased().hasPrefix(Self.scheme) else {
            throw Problem("not an icecast:// or icecasts:// (TLS) URL: write \(Self.form)")
        }
        let form = tls ? Self.tlsForm : Self.form
        if let bad = text.unicodeScalars.first(where: { $0.value < 0x21 || $0.value >= 0x7F }) {
            let code = String(bad.value, radix: 16, uppercase: true)
            throw Problem("the URL contains a space, control or non-ASCII character (U+\(code)): escape it as %XX")
        }
        let rest = text.dropFirst(tls ? Self.tlsScheme.count : Self.scheme.count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        let path = rest[slash...]
        if authority.contains("?") || authority.contains("#") || path.contains("?") || path.contains("#") {
            throw Problem("a push URL takes no query or fragment (? or #): write \(form)")
        }
        guard let at = authority.lastIndex(of: "@") else {
            throw Problem("the URL has no source password: write \(form)")
        }
        let userInfo = authority[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else {
            throw Problem("the URL has a user but no password: write \(form)")
        }
        guard let user = Self.percentDecoded(userInfo[..<colon]),
            let password = Self.percentDecoded(userInfo[userInfo.index(after: colon)...])
        else { throw Problem("the user or password has a bad %XX escape: write % as %25") }
        guard !password.isEmpty else { throw Problem("the source password is empty: write \(form)") }
        let (host, port) = try Self.hostAndPort(authority[authority.index(after: at)...], form: form)
        guard Self.isMount(path) else {
            throw Problem(
                path.count <= 1
                    ? "the URL has no mount: add one, as in \(form)"
                    : "the mount must be 1 to 255 of A-Z a-z 0-9 . _ - ~ / after the slash, without ..")
        }
        self.init(
            user: user.isEmpty ? "source" : user, password: password, host: host, port: port, mount: String(path),
            tls: tls)
    }

    /// The target for logs and status: the credentials replaced by `***` (as `Redaction` shows every URL).
    package var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(tls ? Self.tlsScheme : Self.scheme)\(Redaction.mask)@\(shownHost):\(port)\(mount)"
    }

    /// The URL libcurl connects to (`https://` for `icecasts://`); the credentials go separately
    /// (`CURLOPT_USERNAME`, `CURLOPT_PASSWORD`), so they are in no URL anything could log.
    var httpURL: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(httpScheme)://\(shownHost):\(port)\(mount)"
    }

    /// The one protocol libcurl may use (`CURLOPT_PROTOCOLS_STR`): no redirect or proxy can turn TLS off.
    var httpScheme: String { tls ? "https" : "http" }

    /// Whether two targets are the same Icecast mount (pushing twice to one mount: the second is refused), with or
    /// without TLS.
    func sameMount(as other: IcecastTarget) -> Bool {
        host.lowercased() == other.host.lowercased() && port == other.port && mount == other.mount
    }

    private static func hostAndPort(_ text: Substring, form: String) throws(Problem) -> (String, Int) {
        if text.hasPrefix("["), !text.contains("]") { throw Problem("an IPv6 host needs its closing ]") }
        guard let (host, portText) = HostPort.split(text) else {
            if text.hasPrefix("[") { throw Problem("after [IPv6] comes :PORT or the mount: write \(form)") }
            throw Problem("the URL has no host name: write \(form)")
        }
        if text.hasPrefix("["), Values.address(String(host)) == nil || !host.contains(":") {
            throw Problem("[\(host)] is not an IPv6 address")
        }
        guard text.hasPrefix("[") || host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }) else {
            throw Problem("the host name \(host) has a character a host name cannot have")
        }
        guard let portText else { return (String(host), defaultPort) }
        guard let port = Port.parse(portText) else { throw Problem("the port \(portText) is not \(Port.accepts)") }
        return (String(host), port)
    }

    private static func isMount(_ path: Substring) -> Bool {
        let name = path.dropFirst()
        guard path.hasPrefix("/"), (1...255).contains(name.utf8.count), !name.contains("..") else { return false }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                return true
            default: return false
            }
        }
    }

    /// `%XX` escapes decoded as UTF-8; nil for a broken escape or bytes that are not UTF-8.
    private static func percentDecoded(_ text: Substring) -> String? {
        guard let bytes = PercentEncoding.decode(text.utf8, strict: true) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
