import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `[dj NAME]` sections: what they give (accounts, stations that take live sources without `source_password`), every
/// problem at its line, no secret in a message, and what a reload does with the accounts.
@Suite struct DJConfigTests {
    static let stations = """
        [server]
        http = 8001
        [station main]
        upstream = /a.mp3
        port = 9000
        source_password = station-pw-1
        [station studio]
        port = 9001

        """

    static func parse(_ text: String, credentials: String? = nil) throws -> ServerConfiguration {
        try ServerConfiguration.parse(text, file: "r.conf", credentialsDirectory: credentials)
    }

    static func messages(_ text: String) -> [String] { ConfigFileErrorTests.messages(text) }

    @Test func accountsAndTheStationsTheyTakeOver() throws {
        let directory = temporaryPath("dj-credentials")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "bob-pw-from-file\n".write(toFile: directory + "/bob", atomically: true, encoding: .utf8)
        let configuration = try Self.parse(
            Self.stations + """
                [dj alice]
                password = alice-pw-1
                stations = main, studio
                hours = Mon-Fri 20:00-23:00,sat   10:00-12:00
                timezone = Europe/Berlin
                [dj bob]
                password = @credential:bob
                stations = main

                """, credentials: directory)
        #expect(configuration.accounts.map(\.name) == ["alice", "bob"])
        let alice = try #require(configuration.accounts.first)
        #expect(alice.stations == ["main", "studio"] && alice.hours?.timeZone.identifier == "Europe/Berlin")
        #expect(alice.hours?.text == "Mon-Fri 20:00-23:00, sat 10:00-12:00")
        #expect(configuration.accounts[1].password == SourcePassword("bob-pw-from-file"))
        #expect(configuration.accounts[1].hours == nil)
        // studio has no upstream and no source_password: its DJs are its only input.
        let studio = try #require(configuration.stations.last)
        #expect(studio.liveAccounts && studio.takesLiveSources && studio.sourcePassword == nil)
        #expect(studio.inputs.map(\.name) == [InputConfiguration.liveName])
        #expect(configuration.stations[0].liveAccounts && configuration.stations[0].inputs.count == 2)
        // check-config names them.
        let file = directory + "/dj.conf"
        try (Self.stations + "[dj alice]\npassword = alice-pw-1\nstations = studio\n").write(
            toFile: file, atomically: true, encoding: .utf8)
        let check = ConfigCheck(path: file, credentialsDirectory: nil)
        #expect(
            check.report.hasPrefix("\(file): OK, 2 stations (main, studio), 1 DJ account (alice)"), "\(check.report)")
        // Without accounts naming it, a station with neither is refused as before.
        #expect(Self.messages(Self.stations).first?.hasPrefix("r.conf:7: [station studio] has no upstream") == true)
    }

    @Test func everyProblemAtItsLine() {
        let text =
            Self.stations + """
                [dj alice]
                password = short
                stations = main, nowhere
                hours = Mon 20:00
                timezone = Mars/Olympus
                color = blue
                [dj admin]
                password = admin-pw-12
                stations = main
                [dj source]
                [dj carol]
                stations = main,
                [dj alice]
                password = alice-pw-1
                stations = main
                stations = studio
                [dj <b>]

                """
        #expect(
            Self.messages(text) == [
                // No account names studio (alice's is refused, and names main).
                "r.conf:7: [station studio] has no upstream: add upstream = an http(s) URL, a file: URL or a path",
                "r.conf:10: password = ***: use 8 to 256 visible ASCII characters (no spaces or colons), or @credential:NAME",
                "r.conf:11: dj alice: no [station nowhere] in the file: add it, or take it out of stations",
                "r.conf:12: hours = Mon 20:00: \"Mon 20:00\" is not DAYS HH:MM-HH:MM: use \(AirHours.accepts)",
                "r.conf:13: timezone = Mars/Olympus: use \(AirHours.zoneAccepts)",
                "r.conf:14: unknown key color in [dj alice]: use password, stations, hours or timezone",
                "r.conf:15: dj admin: the admin's user name (admin_user): give the DJ another name",
                "r.conf:18: bad DJ name \"source\": use \(DJAccount.nameRule), as in [dj alice]",
                "r.conf:19: [dj carol] has no password: add password = \(SourcePassword.accepts)",
                "r.conf:20: stations = main,: use station names (\(StationNames.rule)), comma-separated, each once",
                "r.conf:21: duplicate dj alice (the first is at line 9): rename one",
                "r.conf:24: duplicate key stations (the first is at line 23): keep one",
                "r.conf:25: bad DJ name \"<b>\": use \(DJAccount.nameRule), as in [dj alice]",
            ])
    }

    @Test func whatAStationTakenOverNeeds() {
        let noHTTP = """
            [station studio]
            port = 9001
            [dj alice]
            password = alice-pw-1
            stations = studio

            """
        #expect(
            Self.messages(noHTTP) == [
                "r.conf:1: station studio: a DJ account takes live sources on the HTTP address: set http in [server] "
                    + "(or --http)"
            ])
        let edge = """
            [server]
            http = 8001
            [station edge]
            upstream = tcp://root.example:9000
            [dj alice]
            password = alice-pw-1
            stations = edge

            """
        #expect(Self.messages(edge).first?.contains("station edge: a DJ account takes MP3 or Ogg Opus sources") == true)
    }

    /// Every `[dj NAME]` key applies in place: the reload names the account and the keys that changed, no secret.
    @Test func reloadsApplyAccountsInPlace() throws {
        let base = DJSettings(password: SourcePassword("alice-pw-1"), stations: ["a"])
        let running = try #require(base.account(name: "alice"))
        for option in OptionSpecification.accountOptions {
            let setting = try #require(option.accountSetting)
            let sample = try #require(ReloadRuleTests.samples[option.key]?.first)
            var settings = base
            if option.key == "timezone" { settings.hours = try AirHours.windows("daily 10:00-11:00").get() }
            #expect(setting(sample, &settings), "\(option.key) = \(sample)")
            #expect(option.reload == .inPlace)
            let new = try #require(settings.account(name: "alice"))
            let line = ReloadPlan.accountChanges(running: [running], new: [new])
            #expect(line?.hasPrefix("reload: DJ accounts: changed alice (") == true, "\(option.key): \(line ?? "")")
            #expect(line?.contains(option.key) == true, "\(option.key)")
            #expect(line?.contains("dj-password-1") == false, "no secret")
        }
        let bob = DJAccount(name: "bob", password: SourcePassword("bob-pw-12")!, stations: ["a"])
        #expect(
            ReloadPlan.accountChanges(running: [running], new: [bob])
                == "reload: DJ accounts: added bob; removed alice (in place)")
        #expect(ReloadPlan.accountChanges(running: [running], new: [running]) == nil)
        // A set on the air ends when its credentials are gone, not when they change.
        var station = StationConfiguration()
        station.name = "a"
        #expect(ReloadPlan.onAirRevoked(.dj("alice"), station: station, accounts: [bob]))
        #expect(!ReloadPlan.onAirRevoked(.dj("bob"), station: station, accounts: [bob]))
        station.name = "b"
        #expect(ReloadPlan.onAirRevoked(.dj("bob"), station: station, accounts: [bob]), "b is not in bob's list")
        #expect(ReloadPlan.onAirRevoked(.station, station: station, accounts: []))
        station.sourcePassword = SourcePassword("station-pw-1")
        #expect(!ReloadPlan.onAirRevoked(.station, station: station, accounts: []))
        // A station that DJ accounts start or stop naming is updated in place (its live input added or removed).
        var named = station
        named.liveAccounts = true
        #expect(StationReload(running: station, new: named, ringsHold: { _ in true }) == .update)
    }
}
