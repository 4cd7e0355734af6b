import RadioRelaySystem

/// A station's `source_password`: what a live source client sends with user `source` (HTTP Basic, as Icecast's
/// sources do). A secret: it prints as `***`, and is compared in time that does not depend on where a guess differs.
public struct SourcePassword: Sendable, Equatable, CustomStringConvertible {
    fileprivate let bytes: [UInt8]

    /// 8 to 256 visible ASCII characters (no spaces, no colon); nil otherwise.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard (8...256).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x3A })
        else { return nil }
        self.bytes = bytes
    }

    public static let accepts = "8 to 256 visible ASCII characters (no spaces or colons), or @credential:NAME"
    /// The user name a source sends (Icecast's).
    public static let user = "source"

    public var description: String { "***" }

    /// Whether `candidate` is the password, in time that does not depend on where they differ.
    package func matches(_ candidate: some Collection<UInt8>) -> Bool { secretMatches(bytes, candidate) }

    /// What an `Authorization` header says about a source's credentials.
    package enum Check: Equatable, Sendable {
        /// No `Authorization: Basic` at all (libshout asks without first, to learn the server's challenge).
        case missing
        case wrong
        case accepted
    }

    /// Checks `Authorization: Basic base64(source:PASSWORD)`; any other user, scheme or encoding is `wrong`.
    package func check(_ authorization: String?) -> Check {
        guard let authorization else { return .missing }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic", parts[1].utf8.count <= 1024,
            let decoded = Base64.decode(parts[1].utf8.filter { $0 != 0x20 })
        else { return .wrong }
        guard let colon = decoded.firstIndex(of: 0x3A) else { return .wrong }
        let user = decoded[..<colon]
        let password = decoded[decoded.index(after: colon)...]
        // Both compared whatever the first says: the time does not tell which one was wrong.
        let userMatches = user.elementsEqual(Self.user.utf8)
        let passwordMatches = matches(password)
        return userMatches && passwordMatches ? .accepted : .wrong
    }
}
