import RadioRelaySystem

/// What a listener's player sent as HTTP Basic (`Authorization: Basic base64(user:password)`: ffmpeg, mpv and VLC
/// send it for `http://user:pass@host/mount` once answered `401` with a challenge). The user is shown (sanitized)
/// in logs; the password is a secret: it prints as `***`, and only the backend call and the htpasswd check read its
/// bytes.
package struct ListenerCredentials: Sendable, Equatable, CustomStringConvertible {
    /// The user's bytes as sent (at most `maxBytes`).
    package let user: [UInt8]
    package let password: ListenerPassword

    /// Bytes of user or password at most: a longer one is no credential (a backend never needs more).
    package static let maxBytes = 1024

    package init?(user: [UInt8], password: [UInt8]) {
        guard user.count <= Self.maxBytes, password.count <= Self.maxBytes else { return nil }
        self.user = user
        self.password = ListenerPassword(password)
    }

    /// The credentials an `Authorization` header carries: nil for no header, another scheme, broken Base64 or no
    /// colon (a player that sends something else is a listener without credentials).
    package static func basic(_ authorization: String?) -> ListenerCredentials? {
        guard let authorization, authorization.utf8.count <= 4 * Self.maxBytes else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Base64.decode(parts[1].utf8.filter { $0 != 0x20 }),
            let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return nil }
        return ListenerCredentials(
            user: Array(decoded[..<colon]), password: Array(decoded[decoded.index(after: colon)...]))
    }

    /// The user as a log line may show it.
    package var shownUser: String { Sanitized.text(String(decoding: user, as: UTF8.self), limit: 64) }

    package var description: String { "\(shownUser):***" }
}

/// A listener's password: never printed (`***`), compared in time that does not depend on where it differs.
package struct ListenerPassword: Sendable, Equatable, CustomStringConvertible {
    /// The bytes, for the backend's form and the htpasswd hash only.
    package let bytes: [UInt8]

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var description: String { Redaction.mask }

    package static func == (lhs: ListenerPassword, rhs: ListenerPassword) -> Bool {
        secretMatches(lhs.bytes, rhs.bytes)
    }
}
