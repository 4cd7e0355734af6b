import RadioRelaySystem

/// The admin page's sessions and form tokens, as a value on virtual time (tests: `AdminSessionsTests`): the rule that
/// keeps another site's page from making the operator's browser change anything (CSRF).
///
/// - A session opens when the admin (HTTP Basic) loads `/admin/`: a random 128-bit ID, sent as the cookie `name`
///   (`HttpOnly; SameSite=Strict; Path=/admin/`), and a random 128-bit form token, written into every form of the
///   page. A later load with a known, unexpired cookie keeps its session (tabs share one).
/// - A form is taken only with the cookie of a known session that has not expired (`lifetime` from its opening) and
///   that session's token (compared in time that does not depend on where they differ): another site cannot read the
///   page, so it cannot know the token, and with `SameSite=Strict` its requests carry no cookie at all.
/// - Bounded: at most `capacity` sessions; a new one first forgets the expired ones, then the oldest.
/// - A session carries one line for its next page (`flash`): what the last form did.
package struct AdminSessions: Sendable {
    package static let capacity = 64
    package static let lifetime = 12 * 3600.0
    /// The cookie's name.
    package static let cookie = "rr_admin"

    package struct Session: Sendable, Equatable {
        /// 32 lowercase hex digits each.
        package var id: String
        package var token: String
        /// Monotonic seconds.
        package var opened: Double
        package var flash: String?
    }

    /// Why a form was taken or refused.
    package enum Check: Equatable, Sendable {
        case accepted
        /// No cookie, or one naming no session this server knows (forgotten, from another run, made up).
        case unknownSession
        case expired
        /// The session is known; the form's token is missing or not its.
        case wrongToken

        /// What the operator reads on the refusal page.
        package var reason: String {
            switch self {
            case .accepted: "accepted"
            case .unknownSession: "this form does not belong to a session of this page"
            case .expired: "the page's session has expired"
            case .wrongToken: "the form's token is not this session's"
            }
        }
    }

    /// Oldest first.
    private(set) var sessions: [Session] = []

    package init() {}

    package var count: Int { sessions.count }

    /// The session the cookie names when it is known and not expired at `now`; otherwise a new one (the caller sets
    /// its cookie). The second value says whether it is new.
    package mutating func open(
        cookie: String?, now: Double, random: inout some RandomNumberGenerator
    ) -> (session: Session, isNew: Bool) {
        if let index = index(of: cookie), !isExpired(sessions[index], now: now) { return (sessions[index], false) }
        sessions.removeAll { !(now - $0.opened < Self.lifetime) }
        if sessions.count >= Self.capacity { sessions.removeFirst(sessions.count - Self.capacity + 1) }
        let session = Session(id: Self.randomHex(&random), token: Self.randomHex(&random), opened: now)
        sessions.append(session)
        return (session, true)
    }

    /// Whether a form sent with `cookie` and `token` is taken at `now`.
    package func check(cookie: String?, token: [UInt8]?, now: Double) -> Check {
        guard let index = index(of: cookie) else { return .unknownSession }
        let session = sessions[index]
        if isExpired(session, now: now) { return .expired }
        guard let token, secretMatches(Array(session.token.utf8), token) else { return .wrongToken }
        return .accepted
    }

    /// Leaves `message` for the session's next page.
    package mutating func setFlash(_ message: String, cookie: String?) {
        guard let index = index(of: cookie) else { return }
        sessions[index].flash = message
    }

    /// The line left for this page, once.
    package mutating func takeFlash(cookie: String?) -> String? {
        guard let index = index(of: cookie) else { return nil }
        defer { sessions[index].flash = nil }
        return sessions[index].flash
    }

    /// The `Set-Cookie` value of a session.
    package static func setCookie(_ session: Session) -> String {
        "\(cookie)=\(session.id); Path=/admin/; HttpOnly; SameSite=Strict; Max-Age=\(Int(lifetime))"
    }

    /// The session ID among a request's `Cookie` field values (`a=b; rr_admin=ID`), read by bytes: the first
    /// `rr_admin` pair whose value is 32 hex digits; nil otherwise.
    package static func cookieID(_ values: [String]) -> String? {
        for value in values.prefix(16) {
            for pair in value.utf8.split(separator: UInt8(ascii: ";")).prefix(64) {
                var bytes = pair[...]
                while bytes.first == UInt8(ascii: " ") || bytes.first == UInt8(ascii: "\t") {
                    bytes = bytes.dropFirst()
                }
                let prefix = Array("\(cookie)=".utf8)
                guard bytes.starts(with: prefix) else { continue }
                let id = bytes.dropFirst(prefix.count)
                guard id.count == 32, id.allSatisfy({ PercentEncoding.hexValue($0) != nil }) else { return nil }
                return String(decoding: id, as: UTF8.self).lowercased()
            }
        }
        return nil
    }

    private func isExpired(_ session: Session, now: Double) -> Bool { !(now - session.opened < Self.lifetime) }

    /// The session whose ID is `cookie`: every ID is compared (in constant time), so the time taken says nothing of
    /// how close a guess came.
    private func index(of cookie: String?) -> Int? {
        guard let cookie else { return nil }
        let candidate = Array(cookie.utf8)
        var found: Int?
        for (index, session) in sessions.enumerated() where secretMatches(Array(session.id.utf8), candidate) {
            found = index
        }
        return found
    }

    /// 128 random bits as 32 lowercase hex digits.
    static func randomHex(_ random: inout some RandomNumberGenerator) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for _ in 0..<2 {
            var word = random.next()
            for _ in 0..<16 {
                out.append(digits[Int(word >> 60)])
                word <<= 4
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
