import RadioRelaySystem

/// A presenter's account (`[dj NAME]` in a config file): the user NAME and a password a source client sends (HTTP
/// Basic, as with user `source`), the stations the DJ may take over, and the hours the DJ may connect in (none: any
/// time). The password is a `SourcePassword`: it prints as `***` and is compared in constant time.
package struct DJAccount: Sendable, Equatable, CustomStringConvertible {
    package var name: String
    package var password: SourcePassword
    /// The stations the DJ may take over, by name.
    package var stations: [String]
    /// When the DJ may connect; nil: at any time.
    package var hours: AirHours?

    package init(name: String, password: SourcePassword, stations: [String], hours: AirHours? = nil) {
        self.name = name
        self.password = password
        self.stations = stations
        self.hours = hours
    }

    /// What a name may be: it is a user name in HTTP Basic, and appears in logs, JSON and the station page.
    package static let nameRule = "1 to 64 of A-Z a-z 0-9 _ - (not source)"

    /// `[A-Za-z0-9_-]{1,64}`, and not `source` in any case (the station's own user).
    package static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.lowercased() != SourcePassword.user
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }

    package func mayTakeOver(_ station: String) -> Bool { stations.contains(station) }

    /// Whether the DJ may connect at wall-clock `seconds` (Unix).
    package func inHours(at seconds: Double) -> Bool { hours?.contains(seconds) ?? true }

    package var description: String {
        "dj \(name) (stations \(stations.joined(separator: ", "))\(hours.map { "; hours \($0)" } ?? ""); password ***)"
    }
}

/// Every DJ account of the server, with the bars `killsource?ban=` set on them: a pure value on virtual time
/// (monotonic seconds; tests: `DJAccountTests`). A bar keeps the account off every station until it ends; it lasts
/// across a reload while the account exists. Bounded: bars are kept for existing accounts only.
package struct SourceAccounts: Sendable, Equatable {
    package private(set) var accounts: [String: DJAccount] = [:]
    /// Until when each barred account is refused (monotonic seconds).
    private var bars: [String: Double] = [:]

    package init(_ accounts: [DJAccount] = []) { replace(with: accounts) }

    /// The accounts after a reload: the bars of accounts that still exist stay.
    package mutating func replace(with list: [DJAccount]) {
        accounts = Dictionary(list.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        bars = bars.filter { accounts[$0.key] != nil }
    }

    package var isEmpty: Bool { accounts.isEmpty }

    /// The account whose name is `user` (the bytes a client sent).
    package func account(_ user: some Collection<UInt8>) -> DJAccount? {
        guard (1...64).contains(user.count) else { return nil }
        return accounts[String(decoding: user, as: UTF8.self)]
    }

    /// Whether any account may take over `station`.
    package func serve(_ station: String) -> Bool { accounts.values.contains { $0.mayTakeOver(station) } }

    /// Bars account `name` until `now + seconds`; 0 lifts its bar. False for no such account.
    @discardableResult
    package mutating func bar(_ name: String, for seconds: Int, now: Double) -> Bool {
        guard accounts[name] != nil else { return false }
        bars[name] = seconds > 0 ? now + Double(seconds) : nil
        return true
    }

    /// Lifts the bars of every account that may take over `station` (`killsource?ban=0`); returns their names.
    package mutating func lift(station: String) -> [String] {
        let lifted = bars.keys.filter { accounts[$0]?.mayTakeOver(station) == true }.sorted()
        for name in lifted { bars[name] = nil }
        return lifted
    }

    /// Seconds account `name`'s bar still lasts at `now`; nil: none.
    package func barred(_ name: String, now: Double) -> Double? {
        guard let until = bars[name], until > now else { return nil }
        return until - now
    }
}
