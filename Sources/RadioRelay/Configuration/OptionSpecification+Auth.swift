import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `serve`'s options about listener authentication: Icecast's `url` authentication (`listener_add`,
/// `listener_remove`, `auth_header`, `auth_timeout`, `auth_failure`) and an htpasswd file. Station keys that
/// `[server]` may set for every station; each applies in place on a reload, to the listeners who come next (one
/// already admitted keeps the remove URL of its admission). A station with either is protected
/// (`StationConfiguration.problems`: no raw port, no HLS).
extension OptionSpecification {
    static let authOptions: [OptionSpecification] = [
        .init(
            name: "listener-add", placeholder: "URL",
            summary: "protect the station: POST listener_add to URL, Icecast-style (default: none)",
            accepts: "none, or an absolute http:// or https:// URL",
            setting: station({ AuthSettings.backendURL($0).accepted }, \.authentication.addURL),
            acceptsCredential: true, isServerDefault: true, reload: .inPlace,
            refusal: { AuthSettings.backendURL($0).failureText }),
        .init(
            name: "listener-remove", placeholder: "URL",
            summary: "POST listener_remove to URL when an admitted listener leaves (default: none)",
            accepts: "none, or an absolute http:// or https:// URL",
            setting: station({ AuthSettings.backendURL($0).accepted }, \.authentication.removeURL),
            acceptsCredential: true, isServerDefault: true, reload: .inPlace,
            refusal: { AuthSettings.backendURL($0).failureText }),
        .init(
            name: "auth-header", placeholder: "LINE",
            summary: "the answer header that admits a listener (default icecast-auth-user: 1)",
            accepts: "NAME: VALUE, a header name and a value of printable ASCII",
            setting: station(AuthHeader.init, \.authentication.header), isServerDefault: true, reload: .inPlace,
            quoted: { Sanitized.text($0, limit: 64) }),
        .init(
            name: "auth-timeout", placeholder: "S",
            summary: "seconds a listener waits for the backend's answer at most (default 5)",
            accepts: "\(Values.text(ListenerAuthentication.timeoutRange)) seconds",
            setting: station(Values.seconds(ListenerAuthentication.timeoutRange), \.authentication.timeout),
            isServerDefault: true, reload: .inPlace),
        .init(
            name: "auth-failure", placeholder: "WHAT",
            summary: "refuse or admit listeners while the backend cannot answer (default refuse)",
            accepts: "refuse or admit",
            setting: station({ ListenerAuthentication.Failure(rawValue: $0) }, \.authentication.failure),
            isServerDefault: true, reload: .inPlace),
        .init(
            name: "htpasswd", placeholder: "FILE",
            summary: "protect the station with an htpasswd file: bcrypt or SHA-crypt (default: none)",
            accepts: "none, or the absolute path of a file of user:hash lines (htpasswd -B, -2 or -5)",
            setting: station({ AuthSettings.htpasswd($0).accepted }, \.authentication.htpasswd),
            isServerDefault: true, reload: .inPlace, refusal: { AuthSettings.htpasswd($0).failureText }),
    ]
}

/// The values of the authentication keys, read and checked in one place.
enum AuthSettings {
    /// A backend's URL: absolute `http://` or `https://`, printable ASCII, a host (`none`: none). It may hold a
    /// secret (a token, credentials): it is kept as a `SecretURL`.
    static func backendURL(_ text: String) -> Result<SecretURL?, AccessFileError> {
        let url = text.trimmingBlanks()
        if url == "none" { return .success(nil) }
        guard AccessFiles.httpAuthority(url) != nil else {
            return .failure(
                AccessFileError(
                    "\(Redaction.text(url)) is not an absolute http:// or https:// URL with a host (printable ASCII, no "
                        + "spaces, at most \(AccessFiles.maxURLBytes) bytes)"))
        }
        return .success(SecretURL(url))
    }

    /// An htpasswd file, read now (`none`: none).
    static func htpasswd(_ text: String) -> Result<HtpasswdFile?, AccessFileError> {
        let path = text.trimmingBlanks()
        if path == "none" { return .success(nil) }
        return AccessFiles.items("@" + path, commas: false).flatMap { items in
            do {
                return .success(try HtpasswdFile(path: path, lines: items.map { ($0.item, $0.place) }))
            } catch {
                return .failure(AccessFileError("\(error)"))
            }
        }
    }
}
