import RadioRelaySystem

/// `[server] admin_password`: what the operator's tools send, with `admin_user`, as HTTP Basic on every `/admin/`
/// call (Icecast's `<admin-password>`). A secret: it prints as `***`, and is compared in time that does not depend on
/// where a guess differs.
public struct AdminPassword: Sendable, Equatable, CustomStringConvertible {
    fileprivate let bytes: [UInt8]

    /// 8 to 256 visible ASCII characters (no spaces); nil otherwise. A colon is allowed (Basic splits at the first).
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard (8...256).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        self.bytes = bytes
    }

    public static let accepts = "8 to 256 visible ASCII characters (no spaces), or @credential:NAME"

    public var description: String { Redaction.mask }

    public static func == (lhs: AdminPassword, rhs: AdminPassword) -> Bool { secretMatches(lhs.bytes, rhs.bytes) }

    /// Whether `candidate` is the password, in time that does not depend on where they differ.
    package func matches(_ candidate: some Collection<UInt8>) -> Bool { secretMatches(bytes, candidate) }
}

/// The admin's account: `admin_user` (default `admin`, as Icecast's) and `admin_password`.
package struct AdminCredentials: Sendable, Equatable, CustomStringConvertible {
    package var user: String
    package var password: AdminPassword

    package static let defaultUser = "admin"
    /// 1 to 64 visible ASCII characters, no colon (HTTP Basic ends the user at the first).
    package static let userAccepts = "1 to 64 visible ASCII characters, no colon"

    package init(user: String = Self.defaultUser, password: AdminPassword) {
        self.user = user
        self.password = password
    }

    /// `admin_user`'s value, checked.
    package static func user(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard (1...64).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x3A }) else {
            return nil
        }
        return text
    }

    /// Whether `credentials` are these, both parts compared whatever the first says (the time does not tell which
    /// one was wrong).
    package func accepts(_ credentials: ListenerCredentials) -> Bool {
        let userMatches = secretMatches(Array(user.utf8), credentials.user)
        let passwordMatches = password.matches(credentials.password.bytes)
        return userMatches && passwordMatches
    }

    package var description: String { "\(user):\(Redaction.mask)" }
}
