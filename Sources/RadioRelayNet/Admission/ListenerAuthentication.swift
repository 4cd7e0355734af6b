import RadioRelaySystem

/// A station's listener authentication, as its settings give it: Icecast's `url` authentication
/// (`listener_add`, `listener_remove`, `auth_header`, `auth_timeout`, `auth_failure`), an htpasswd file, or both
/// (the file first: a listener it knows is admitted without a call, one it does not know is asked about). A station
/// with either is *protected*: every stream listener passes here before it takes a place (`HTTPFrontLoop+Auth`).
package struct ListenerAuthentication: Sendable, Equatable {
    /// What a backend that cannot answer (down, too slow, answering garbage) means for the listener waiting.
    package enum Failure: String, Sendable, CaseIterable {
        /// Refused (503): nobody listens unchecked (the default: a pay-to-listen station stays closed).
        case refuse
        /// Admitted: the station stays open to everyone while its backend is down.
        case admit
    }

    package var addURL: SecretURL?
    package var removeURL: SecretURL?
    package var header = AuthHeader.icecast
    /// Seconds a listener waits for the backend's answer at most (queued and called), and a remove call's bound.
    package var timeout = 5.0
    package var failure = Failure.refuse
    package var htpasswd: HtpasswdFile?

    package static let timeoutRange = 0.1...60.0

    package init(
        addURL: SecretURL? = nil, removeURL: SecretURL? = nil, header: AuthHeader = .icecast, timeout: Double = 5,
        failure: Failure = .refuse, htpasswd: HtpasswdFile? = nil
    ) {
        self.addURL = addURL
        self.removeURL = removeURL
        self.header = header
        self.timeout = timeout
        self.failure = failure
        self.htpasswd = htpasswd
    }

    /// Whether listeners must be checked at all.
    package var isOn: Bool { addURL != nil || htpasswd != nil }
}

/// The header a backend answers to admit a listener (`auth_header`, Icecast's `auth_header` option): a name,
/// compared without case, and the value it must have (trimmed, compared exactly).
package struct AuthHeader: Sendable, Equatable, CustomStringConvertible {
    /// Lowercased.
    package let name: String
    package let value: String

    package static let icecast = AuthHeader(name: "icecast-auth-user", value: "1")

    private init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `name: value`: a token name and a visible ASCII value; nil otherwise.
    package init?(_ text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = String(text[..<colon]).trimmingWhitespace()
        let value = String(text[text.index(after: colon)...]).trimmingWhitespace()
        guard !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy(ResponseHeaders.isToken), !value.isEmpty,
            value.utf8.count <= 256, value.utf8.allSatisfy({ (0x21...0x7E).contains($0) || $0 == 0x20 })
        else { return nil }
        self.name = name.lowercased()
        self.value = value
    }

    package var description: String { "\(name): \(value)" }
}
