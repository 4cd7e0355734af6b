import Foundation
import Testing

@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Who goes on the air, on virtual time: a station's `source` and its DJ accounts, wrong passwords and stations,
/// hours, bars (the station's and an account's), and the lockout's keys per station and account.
@Suite struct SourceGateTests {
    static let host = HostKey(SocketAddress(host: "192.0.2.7", port: 1)!)
    static let other = HostKey(SocketAddress(host: "192.0.2.8", port: 1)!)
    static let main = SourceGate.Station(name: "main", password: SourcePassword("station-pw-1"))
    static let studio = SourceGate.Station(name: "studio", password: nil)
    /// Friday 2026-12-04 20:30 UTC: inside alice's hours; Saturday 09:00 outside.
    static let inHours = 1_796_416_200.0
    static let outOfHours = 1_796_461_200.0

    static var accounts: SourceAccounts {
        let hours = try? AirHours.windows("Mon-Fri 20:00-23:00").get()
        return SourceAccounts([
            DJAccount(
                name: "alice", password: SourcePassword("alice-pw-1")!, stations: ["main", "studio"],
                hours: hours.map { AirHours(windows: $0.windows, timeZone: TimeZone.gmt, text: $0.text) }),
            DJAccount(name: "bob", password: SourcePassword("bob-pw-12")!, stations: ["main"]),
        ])
    }

    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    static func decide(
        _ authorization: String?, _ station: SourceGate.Station = main, accounts: SourceAccounts = accounts,
        stationBar: Double? = nil, lockout: SourceLockout = SourceLockout(), host: HostKey = host, now: Double = 100,
        wallClock: Double = inHours
    ) -> SourceGate.Decision {
        SourceGate.decide(
            authorization, station: station, accounts: accounts, stationBar: stationBar, lockout: lockout, host: host,
            now: now, wallClock: wallClock)
    }

    @Test func theRightCredentialsGoOnTheAir() {
        #expect(Self.decide(Self.basic("source", "station-pw-1")) == .accepted(.station))
        #expect(Self.decide(Self.basic("alice", "alice-pw-1")) == .accepted(.dj("alice")))
        #expect(Self.decide(Self.basic("bob", "bob-pw-12")) == .accepted(.dj("bob")))
        #expect(Self.decide(Self.basic("alice", "alice-pw-1"), Self.studio) == .accepted(.dj("alice")))
        #expect(Self.decide(nil) == .missing)
    }

    @Test func wrongCredentialsCountAgainstTheStationOrTheAccount() {
        let station = SourceLockout.Key.source("main", Self.host)
        let alice = SourceGate.accountKey("main", "alice", Self.host)
        #expect(Self.decide(Self.basic("alice", "bob-pw-12")) == .wrong(key: alice))
        #expect(Self.decide(Self.basic("alice", "alice-pw-1x")) == .wrong(key: alice))
        #expect(Self.decide(Self.basic("source", "alice-pw-1")) == .wrong(key: station))
        // An unknown user is counted against the station: no new key per name tried.
        #expect(Self.decide(Self.basic("mallory", "alice-pw-1")) == .wrong(key: station))
        #expect(Self.decide(Self.basic("Alice", "alice-pw-1")) == .wrong(key: station), "names are exact")
        #expect(Self.decide("Bearer alice-pw-1") == .wrong(key: station))
        #expect(Self.decide("Basic !!!") == .wrong(key: station))
        // A station without source_password takes its DJs only.
        let studio = SourceLockout.Key.source("studio", Self.host)
        #expect(Self.decide(Self.basic("source", "station-pw-1"), Self.studio) == .wrong(key: studio))
    }

    @Test func aDJOfOtherStationsIsRefused() {
        guard case .refused(let refusal) = Self.decide(Self.basic("bob", "bob-pw-12"), Self.studio) else {
            Issue.record("bob on studio")
            return
        }
        #expect(refusal.answer == "DJ bob may not take over this station\n" && refusal.retryAfter == nil)
        #expect(refusal.reason == "DJ bob may not take over station studio")
        // Wrong password there is a failure like any other.
        #expect(
            Self.decide(Self.basic("bob", "nope-nope"), Self.studio)
                == .wrong(key: SourceGate.accountKey("studio", "bob", Self.host)))
    }

    @Test func outsideTheAccountsHours() {
        let decision = Self.decide(Self.basic("alice", "alice-pw-1"), wallClock: Self.outOfHours)
        guard case .refused(let refusal) = decision else {
            Issue.record("\(decision)")
            return
        }
        #expect(refusal.answer == "DJ alice is outside the account's hours (Mon-Fri 20:00-23:00 (GMT))\n")
        #expect(Self.decide(Self.basic("bob", "bob-pw-12"), wallClock: Self.outOfHours) == .accepted(.dj("bob")))
        #expect(Self.decide(Self.basic("source", "station-pw-1"), wallClock: Self.outOfHours) == .accepted(.station))
    }

    /// A DJ's bar is the account's, on every station; the station's bar refuses every source of that station.
    @Test func barsOnVirtualTime() {
        var accounts = Self.accounts
        let barred = accounts.bar("alice", for: 60, now: 100)
        let unknown = accounts.bar("carol", for: 60, now: 100)
        #expect(barred && !unknown, "no such account as carol")
        for station in [Self.main, Self.studio] {
            guard
                case .refused(let refusal) = Self.decide(Self.basic("alice", "alice-pw-1"), station, accounts: accounts)
            else {
                Issue.record("alice barred on \(station.name)")
                continue
            }
            #expect(refusal.retryAfter == 60 && refusal.answer == "DJ alice is barred: try again later\n")
        }
        #expect(Self.decide(Self.basic("bob", "bob-pw-12"), accounts: accounts) == .accepted(.dj("bob")))
        #expect(Self.decide(Self.basic("source", "station-pw-1"), accounts: accounts) == .accepted(.station))
        #expect(accounts.barred("alice", now: 159.5) == 0.5 && accounts.barred("alice", now: 160) == nil)
        #expect(Self.decide(Self.basic("alice", "alice-pw-1"), accounts: accounts, now: 160) == .accepted(.dj("alice")))
        // Only a source with the right credentials learns of a bar.
        #expect(
            Self.decide(Self.basic("alice", "wrong-pw-1"), accounts: accounts)
                == .wrong(key: SourceGate.accountKey("main", "alice", Self.host)))
        // A reload keeps the bars of the accounts it keeps, and drops the others'.
        accounts.bar("bob", for: 600, now: 100)
        var reloaded = accounts
        reloaded.replace(with: [Self.accounts.accounts["alice"]!])
        #expect(reloaded.barred("alice", now: 120) == 40 && reloaded.barred("bob", now: 120) == nil)
        // ban=0 lifts the bars of the station's DJs.
        let lifted = accounts.lift(station: "studio")
        #expect(lifted == ["alice"])
        #expect(accounts.barred("alice", now: 120) == nil && accounts.barred("bob", now: 120) == 580)
        // The station's bar: everyone on that station, DJs included.
        for user in [("source", "station-pw-1"), ("alice", "alice-pw-1"), ("bob", "bob-pw-12")] {
            guard case .refused(let refusal) = Self.decide(Self.basic(user.0, user.1), stationBar: 29.2) else {
                Issue.record("\(user.0) while the station is barred")
                continue
            }
            #expect(refusal.retryAfter == 30 && refusal.answer == "Mountpoint barred: try again later\n")
        }
    }

    /// Ten wrong passwords for alice at main from one address lock that address out of alice at main only.
    @Test func theLockoutIsPerStationAndAccount() {
        var lockout = SourceLockout()
        let alice = SourceGate.accountKey("main", "alice", Self.host)
        for second in 0..<SourceLockout.limit {
            guard case .wrong(let key) = Self.decide(Self.basic("alice", "guess-\(second)xx"), lockout: lockout) else {
                Issue.record("guess \(second)")
                return
            }
            #expect(key == alice)
            lockout.failed(key, now: 100 + Double(second))
        }
        #expect(
            Self.decide(Self.basic("alice", "alice-pw-1"), lockout: lockout, now: 110)
                == .lockedOut(seconds: 50), "the right password too")
        #expect(Self.decide(Self.basic("bob", "bob-pw-12"), lockout: lockout, now: 110) == .accepted(.dj("bob")))
        #expect(Self.decide(Self.basic("source", "station-pw-1"), lockout: lockout, now: 110) == .accepted(.station))
        #expect(
            Self.decide(Self.basic("alice", "alice-pw-1"), Self.studio, lockout: lockout, now: 110)
                == .accepted(.dj("alice")), "alice at another station")
        #expect(
            Self.decide(Self.basic("alice", "alice-pw-1"), lockout: lockout, host: Self.other, now: 110)
                == .accepted(.dj("alice")), "from another address")
        #expect(Self.decide(Self.basic("alice", "alice-pw-1"), lockout: lockout, now: 160) == .accepted(.dj("alice")))
    }

    /// A DJ's credentials pass `metadata` and `killsource` for a station the account may take over, nothing else.
    @Test func theAdminCallsOfADJ() throws {
        let gate = AdminGate(admin: AdminAPITests.admin)
        func decide(_ target: String, _ user: String, _ password: String, source: SourceGate.Station?) throws
            -> AdminGate.Decision
        {
            let request = AdminAPITests.request(target, "Host: relay.example\r\n" + AdminAPITests.basic(user, password))
            let call = try #require(AdminCall.parse(path: request.path, query: request.query))
            return gate.decide(
                call, request, source: source, accounts: Self.accounts, lockout: SourceLockout(), host: Self.host,
                now: 100)
        }
        let kill = "/admin/killsource?mount=/main"
        #expect(try decide(kill, "alice", "alice-pw-1", source: Self.main) == .dj(station: "main", name: "alice"))
        #expect(
            try decide("/admin/metadata?mount=/studio&mode=updinfo&song=x", "alice", "alice-pw-1", source: Self.studio)
                == .dj(station: "studio", name: "alice"))
        let adminKey = AdminGate.adminKey(Self.host)
        #expect(
            try decide(kill.replacingOccurrences(of: "main", with: "studio"), "bob", "bob-pw-12", source: Self.studio)
                == .wrong(key: adminKey))
        #expect(
            try decide("/admin/listclients?mount=/main", "alice", "alice-pw-1", source: Self.main)
                == .wrong(key: adminKey))
        #expect(
            try decide(kill, "alice", "nope-nope", source: Self.main)
                == .wrong(key: SourceGate.accountKey("main", "alice", Self.host)))
        #expect(try decide(kill, "source", "station-pw-1", source: Self.main) == .source(station: "main"))
    }

    @Test func secretsNeverPrint() throws {
        let alice = try #require(Self.accounts.accounts["alice"])
        let shown = "\(alice) \(Self.accounts) \(SourceGate.Decision.accepted(.dj("alice")))"
        #expect(!shown.contains("alice-pw-1") && !shown.contains("bob-pw-12"), "\(shown)")
        #expect("\(alice)" == "dj alice (stations main, studio; hours Mon-Fri 20:00-23:00 (GMT); password ***)")
        #expect(DJAccount.isValidName("dj_night-1") && !DJAccount.isValidName("Source") && !DJAccount.isValidName(""))
        #expect(!DJAccount.isValidName("a b") && !DJAccount.isValidName("<b>") && !DJAccount.isValidName("é"))
    }
}
