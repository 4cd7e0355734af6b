import RadioRelaySystem

/// Who may go on the air at a station, as a pure value on virtual time (tests: `SourceGateTests`): a source's
/// `Authorization` against the station's `source_password` (user `source`) and the DJ accounts, then the bars and
/// the account's hours. The admin calls a source makes take the first half (`credentials`) alone.
///
/// | credentials | answer |
/// |---|---|
/// | none | `missing`: 401 with the challenge, not counted |
/// | user `source`, the station's password (a station without `source_password` has none) | `source` |
/// | a DJ account's user and password, the station in its list | that DJ |
/// | a DJ account's user and password, another station | 403, not counted (the password was right) |
/// | anything else | `wrong`, counted by `SourceLockout` |
///
/// Failures count per address against a key (`SourceLockout.Key`): a DJ account's user counts against that account
/// at that station (`station NAME dj USER`); `source` and every unknown user against the station (`station NAME`).
/// So ten wrong passwords for `alice` from one address lock that address out of `alice` at that station only: not
/// out of `bob`, nor the station's `source`, nor `alice` at another station. Unknown users cannot make new keys.
/// A source with the right credentials is then refused 403 while its station is barred (`killsource?ban=` with the
/// station's `source` on the air: every source of the station), while its account is barred (a DJ's: on every
/// station), or outside its account's hours.
package enum SourceGate {
    /// The station a source asks for: its name and `source_password` (nil: only DJ accounts may connect).
    package struct Station: Sendable, Equatable {
        package var name: String
        package var password: SourcePassword?

        package init(name: String, password: SourcePassword?) {
            self.name = name
            self.password = password
        }
    }

    /// What the credentials are.
    package enum Credentials: Equatable, Sendable {
        case accepted(SourceUser)
        case missing
        /// Wrong credentials, counted against `key`.
        case wrong(key: SourceLockout.Key)
        /// Too many failures from the address for this key: 429 for this many seconds.
        case lockedOut(seconds: Double)
        /// A DJ's right credentials for a station not in the account's list.
        case notAllowed(dj: String)
    }

    /// A DJ account's lockout key at `station` from `host`.
    package static func accountKey(_ station: String, _ dj: String, _ host: HostKey) -> SourceLockout.Key {
        SourceLockout.Key(scope: "station \(station) dj \(dj)", host: host)
    }

    /// Who `authorization` is at `station` (passwords compared in constant time, both parts whatever the first says).
    package static func credentials(
        _ authorization: String?, station: Station, accounts: SourceAccounts, lockout: SourceLockout, host: HostKey,
        now: Double
    ) -> Credentials {
        guard let authorization else { return .missing }
        let credentials = ListenerCredentials.basic(authorization)
        let account = credentials.flatMap { accounts.account($0.user) }
        let key = account.map { accountKey(station.name, $0.name, host) } ?? .source(station.name, host)
        if let wait = lockout.lockedOut(key, now: now) { return .lockedOut(seconds: wait) }
        guard let credentials else { return .wrong(key: key) }
        if let account {
            guard account.password.matches(credentials.password.bytes) else { return .wrong(key: key) }
            return account.mayTakeOver(station.name) ? .accepted(.dj(account.name)) : .notAllowed(dj: account.name)
        }
        guard let password = station.password else { return .wrong(key: key) }
        return password.check(authorization) == .accepted ? .accepted(.station) : .wrong(key: key)
    }

    /// What a source connection is answered.
    package enum Decision: Equatable, Sendable {
        case accepted(SourceUser)
        case missing
        case wrong(key: SourceLockout.Key)
        case lockedOut(seconds: Double)
        /// 403: the right credentials, refused for `reason` (with `Retry-After` when `retryAfter` is set).
        case refused(Refusal)
    }

    package struct Refusal: Equatable, Sendable {
        /// The answer's text.
        package var answer: String
        /// What the log line says after "refused 403: ".
        package var reason: String
        package var retryAfter: Int?
    }

    /// - Parameters:
    ///   - stationBar: seconds the station's bar still lasts (`SourceDesk.barred`), nil: none.
    ///   - now: monotonic seconds (lockout and bars); `wallClock`: Unix seconds (hours).
    package static func decide(
        _ authorization: String?, station: Station, accounts: SourceAccounts, stationBar: Double?,
        lockout: SourceLockout, host: HostKey, now: Double, wallClock: Double
    ) -> Decision {
        let user: SourceUser
        switch credentials(authorization, station: station, accounts: accounts, lockout: lockout, host: host, now: now)
        {
        case .accepted(let who): user = who
        case .missing: return .missing
        case .wrong(let key): return .wrong(key: key)
        case .lockedOut(let seconds): return .lockedOut(seconds: seconds)
        case .notAllowed(let dj):
            return .refused(
                Refusal(
                    answer: "DJ \(dj) may not take over this station\n",
                    reason: "DJ \(dj) may not take over station \(station.name)"))
        }
        // Only a source with the right credentials learns of a bar or of its hours.
        if let wait = stationBar {
            let seconds = Int(min(wait, 1e9).rounded(.up))
            return .refused(
                Refusal(
                    answer: "Mountpoint barred: try again later\n",
                    reason: "\(user): barred for \(seconds) s more (killsource ban)", retryAfter: seconds))
        }
        guard let dj = user.dj, let account = accounts.accounts[dj] else { return .accepted(user) }
        if let wait = accounts.barred(dj, now: now) {
            let seconds = Int(min(wait, 1e9).rounded(.up))
            return .refused(
                Refusal(
                    answer: "DJ \(dj) is barred: try again later\n",
                    reason: "DJ \(dj) barred for \(seconds) s more (killsource ban)", retryAfter: seconds))
        }
        if let hours = account.hours, !hours.contains(wallClock) {
            return .refused(
                Refusal(
                    answer: "DJ \(dj) is outside the account's hours (\(hours))\n",
                    reason: "DJ \(dj) outside the account's hours (\(hours))"))
        }
        return .accepted(user)
    }
}
