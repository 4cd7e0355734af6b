import RadioRelaySystem

/// Who may make an admin call, as a pure value on virtual time (tests: `AdminGateTests`):
///
/// - **Cross-site**: a call that changes state (`AdminCall.Command.changesState`) from a browser on another site —
///   `Sec-Fetch-Site` other than `same-origin` or `none`, or an `Origin` whose host is not the request's `Host` — is
///   refused 403 whatever its credentials: a page elsewhere could otherwise make the operator's logged-in browser kick
///   listeners. Reading calls are not refused (a browser's same-origin policy keeps the answers from that page).
/// - **The admin** (`admin_user`, `admin_password`, HTTP Basic) may make every call. Without `admin_password`, no
///   admin credentials exist: only sources' own calls pass.
/// - **A live source** (user `source` and its station's `source_password`, or a DJ account's user and password for
///   a station in the account's list: `SourceGate.credentials`) may make `metadata` and `killsource`, for a mount of
///   that station only (never with `ban=`: a bar is the admin's).
/// - **Failures** (wrong credentials, not missing ones) count against the address in `SourceLockout`: the admin's
///   under scope `admin`, a source's under its station's (a DJ's under that account at that station), so guesses at
///   one never lock the other out.
package struct AdminGate: Sendable {
    /// What the gate found out.
    package enum Decision: Equatable, Sendable {
        case admin
        /// A live source of this station, for its own mount's `metadata` or `killsource`.
        case source(station: String)
        /// A DJ account that may take this station over, for its mount's `metadata` or `killsource`.
        case dj(station: String, name: String)
        /// No credentials: 401 with the challenge (not a failure).
        case missing
        /// Wrong credentials, counted against `key`: 401.
        case wrong(key: SourceLockout.Key)
        /// Too many failures from the address: 429 for this many seconds.
        case lockedOut(seconds: Double)
        /// A browser on another site asked for a change: 403.
        case crossSite
    }

    /// The admin's account; nil: `admin_password` is not set.
    package var admin: AdminCredentials?

    package init(admin: AdminCredentials?) { self.admin = admin }

    /// The lockout key of the admin's credentials from `host`.
    package static func adminKey(_ host: HostKey) -> SourceLockout.Key { SourceLockout.Key(scope: "admin", host: host) }

    /// - Parameters:
    ///   - source: the station whose mount the call names, if it takes live sources.
    ///   - accounts: the DJ accounts.
    package func decide(
        _ call: AdminCall, _ request: HTTPRequestHead.Request, source: SourceGate.Station?,
        accounts: SourceAccounts = SourceAccounts(), lockout: SourceLockout, host: HostKey, now: Double
    ) -> Decision {
        if call.command.changesState, Self.isCrossSite(request) { return .crossSite }
        guard let authorization = request.field("authorization") else { return .missing }
        let credentials = ListenerCredentials.basic(authorization)
        let asSource =
            credentials.map { $0.user.elementsEqual(SourcePassword.user.utf8) || accounts.account($0.user) != nil }
            ?? false
        if asSource, call.command.sourceMayCall, let source {
            switch SourceGate.credentials(
                authorization, station: source, accounts: accounts, lockout: lockout, host: host, now: now)
            {
            case .accepted(.station): return .source(station: source.name)
            case .accepted(.dj(let name)): return .dj(station: source.name, name: name)
            case .missing: return .missing
            case .wrong(let key): return .wrong(key: key)
            case .lockedOut(let seconds): return .lockedOut(seconds: seconds)
            case .notAllowed: break  // a DJ of other stations: as a source of another mount, the admin's to answer
            }
        }
        return adminDecision(credentials, lockout: lockout, host: host, now: now)
    }

    /// Who may use the admin page (`/admin/`): the admin alone (a source's credentials are wrong ones here); a form
    /// posted to it (`changesState`) from another site's page is refused first, whatever it carries.
    package func decidePage(
        _ request: HTTPRequestHead.Request, changesState: Bool, lockout: SourceLockout, host: HostKey, now: Double
    ) -> Decision {
        if changesState, Self.isCrossSite(request) { return .crossSite }
        guard let authorization = request.field("authorization") else { return .missing }
        return adminDecision(ListenerCredentials.basic(authorization), lockout: lockout, host: host, now: now)
    }

    private func adminDecision(
        _ credentials: ListenerCredentials?, lockout: SourceLockout, host: HostKey, now: Double
    ) -> Decision {
        let key = Self.adminKey(host)
        if let wait = lockout.lockedOut(key, now: now) { return .lockedOut(seconds: wait) }
        guard let admin, let credentials, admin.accepts(credentials) else { return .wrong(key: key) }
        return .admin
    }

    /// Whether a browser sent the request from a page of another site.
    package static func isCrossSite(_ request: HTTPRequestHead.Request) -> Bool {
        if let site = request.field("sec-fetch-site")?.lowercased(), site != "same-origin", site != "none" {
            return true
        }
        guard let origin = request.field("origin") else { return false }
        // `scheme://authority`: its authority must be the request's Host (a `null` origin is another site).
        let parts = origin.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].hasSuffix(":"), parts[1].isEmpty, let host = request.host else { return true }
        return parts[2].lowercased() != host.lowercased()
    }
}
