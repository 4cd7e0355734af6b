import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Who may listen by address and user agent (`allow`, `deny`, `deny_agents`) and who the client is behind a reverse
/// proxy in HTTP mode (`forwarded_from`), as values.
@Suite struct AccessListTests {
    static func address(_ host: String) -> SocketAddress { SocketAddress(host: host, port: 40_000)! }

    static func set(_ items: [String]) throws -> AddressSet {
        AddressSet(try items.map { try #require(AddressRange($0)) })
    }

    @Test func networksOfBothFamiliesAreFoundByBinarySearchAcrossMergedIntervals() throws {
        let set = try Self.set([
            "10.0.0.0/8", "10.1.0.0/16", "192.0.2.7", "192.0.2.8", "2001:db8::/32", "198.51.100.0/25",
            "198.51.100.128/25", "0.0.0.0/32",
        ])
        // Overlapping and adjacent networks are merged: 10/8 (with 10.1/16), 192.0.2.7–8, 198.51.100/24, ...
        #expect(set.intervals.count == 5)
        for inside in [
            "10.0.0.0", "10.255.255.255", "10.1.2.3", "192.0.2.7", "192.0.2.8", "198.51.100.200",
            "2001:db8::1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "::ffff:10.2.3.4", "0.0.0.0",
        ] {
            #expect(set.contains(Self.address(inside)), "\(inside)")
        }
        for outside in [
            "9.255.255.255", "11.0.0.0", "192.0.2.6", "192.0.2.9", "198.51.101.0", "2001:db9::",
            "::1", "0.0.0.1", "2001:db7:ffff::",
        ] {
            #expect(!set.contains(Self.address(outside)), "\(outside)")
        }
        let everything = try Self.set(["::/0"])
        #expect(everything.contains(Self.address("203.0.113.1")) && everything.contains(Self.address("::1")))
        #expect(!AddressSet([]).contains(Self.address("10.0.0.1")))
    }

    @Test func agentPatternsAreWholeGlobsInEitherCase() throws {
        let patterns = try #require(AgentPatterns(["*streamripper*", "Lavf/5?.*", "curl/*"]))
        #expect(patterns.matches("Streamripper/1.64.6"))
        #expect(patterns.matches("my STREAMRIPPER build"))
        #expect(patterns.matches("Lavf/58.76.100"))
        #expect(!patterns.matches("Lavf/60.16.100"))
        #expect(patterns.matches("curl/8.5.0") && !patterns.matches("xcurl/8.5.0"))
        #expect(!patterns.matches("VLC/3.0.18 LibVLC/3.0.18"))
        // Work stays bounded with a hostile agent: a long run of one letter against star-heavy patterns.
        let hostile = try #require(AgentPatterns(["*a*a*a*a*a*a*a*a*b"]))
        #expect(!hostile.matches(String(repeating: "a", count: 100_000)))
        #expect(AgentPatterns([String(repeating: "x", count: 257)]) == nil)
        #expect(AgentPatterns([""]) == nil)
        #expect(!AgentPatterns().matches("anything"))
    }

    @Test func aStationsListDecidesBeforeItsPlacesAndIsCountedByReason() throws {
        var access = AccessList()
        access.deny = try Self.set(["198.51.100.0/24", "2001:db8:bad::/48"])
        access.allow = try Self.set(["198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"])
        access.denyAgents = try #require(AgentPatterns(["*ripper*"]))
        let admission = ListenerAdmission(policy: AdmissionPolicy(access: ["jazz": access]))
        func decide(_ kind: ListenerProtocol, _ host: String, agent: String? = nil, station: String = "jazz")
            -> AdmissionDecision
        {
            var places = AdmissionPolicyTests.Ledger()
            let ask = AdmissionAsk(
                station: station, mount: "/\(station).opus", kind: kind, client: Self.address(host),
                request: kind == .tcp ? nil : ListenerRequest(line: "GET / HTTP/1.1", userAgent: agent))
            let (decision, entry) = admission.admit(ask, places: &places, now: 0)
            if let entry { admission.leave(entry) }
            if decision != .admit { #expect(places.log.isEmpty, "no place is taken before the list decides") }
            return decision
        }
        #expect(
            decide(.http, "203.0.113.9", agent: "StreamRipper/1.6")
                == .refuse(status: 403, reason: "user agent denied (deny_agents)"))
        #expect(decide(.tcp, "203.0.113.9") == .admit, "a raw listener has no agent: the address lists alone")
        #expect(decide(.hls, "198.51.100.20") == .refuse(status: 403, reason: "address denied (deny)"))
        #expect(decide(.tcp, "2001:db8:bad::1") == .refuse(status: 403, reason: "address denied (deny)"))
        #expect(decide(.events, "192.0.2.1") == .refuse(status: 403, reason: "address not allowed (allow)"))
        #expect(decide(.http, "2001:db8::5", agent: "mpv 0.35") == .admit)
        #expect(decide(.http, "192.0.2.1", station: "rock") == .admit, "another station's list is its own")
        let counts = Dictionary(uniqueKeysWithValues: admission.refusalCounts.map { ($0.0, $0.1) })
        #expect(counts[.agentDenied] == 1 && counts[.addressDenied] == 2 && counts[.addressNotAllowed] == 1)
        #expect(counts[.stationFull] == 0)
    }

    /// `overflow`: a listener the station (or the server) has no place for is sent to the next URL in turn; one
    /// refused for another reason is not.
    @Test func aFullStationSendsListenersToItsOverflowURLsInTurn() throws {
        let urls = ["http://edge1.example:8001/jazz.opus", "https://edge2.example/jazz.opus"]
        let admission = ListenerAdmission(policy: AdmissionPolicy(overflow: ["jazz": urls]))
        func decide(_ refuses: Set<ListenerPlace>, station: String = "jazz") -> AdmissionDecision {
            var places = AdmissionPolicyTests.Ledger(refuses: refuses)
            let ask = AdmissionAsk(
                station: station, mount: "/\(station).opus", kind: .http, client: Self.address("192.0.2.1"),
                request: ListenerRequest(line: "GET / HTTP/1.1"))
            let (decision, entry) = admission.admit(ask, places: &places, now: 0)
            if let entry { admission.leave(entry) }
            #expect(places.held.isEmpty || decision == .admit, "a redirected listener holds no place")
            return decision
        }
        #expect(decide([.station]) == .redirect(location: urls[0]))
        #expect(decide([.station]) == .redirect(location: urls[1]))
        #expect(decide([.server]) == .redirect(location: urls[0]))
        #expect(decide([.address]) == .refuse(status: 503, reason: "no address"), "one address's cap is its own")
        #expect(decide([.station], station: "rock") == .refuse(status: 503, reason: "no station"))
        #expect(decide([]) == .admit)
        #expect(admission.redirectCount == 3)
        #expect(PublicRouter.notAdmitted(.redirect(location: urls[1])).headers.contains { $0 == ("Location", urls[1]) })
        let file = try InputConfigTests.parse(
            "[station jazz]\nupstream = http://x.example/a.mp3\noverflow = \(urls.joined(separator: ", "))\n")
        #expect(file.stations.first?.overflow == urls)
        #expect(Server.policy(file.stations).overflow == ["jazz": urls])
        for bad in ["ftp://edge/a.opus", "http:///a.opus", "http://user:pw@edge/a.opus", "http://edge/a b.opus"] {
            #expect(throws: (any Error).self, "\(bad)") {
                _ = try InputConfigTests.parse("[station a]\nupstream = http://x.example/a.mp3\noverflow = \(bad)\n")
            }
        }
    }

    /// The rightmost address that is not a trusted proxy is the client; a header from anyone else is ignored.
    @Test func theClientBehindTrustedProxiesIsTheRightmostUntrustedAddress() throws {
        let proxies = try #require(TrustedProxies(parsing: "127.0.0.1, 10.0.0.0/8"))
        let xff = ForwardedFor(proxies: proxies)
        func client(_ peer: String, _ fields: [(String, String)], _ rule: ForwardedFor = xff) -> String {
            rule.client(peer: Self.address(peer), lines: fields.filter { $0.0 == rule.header.rawValue }.map(\.1)).host
        }
        #expect(client("127.0.0.1", [("x-forwarded-for", "203.0.113.7")]) == "203.0.113.7")
        // A forged entry on the left is never reached; a chain of trusted proxies is walked through.
        #expect(client("127.0.0.1", [("x-forwarded-for", "1.2.3.4, 203.0.113.7, 10.0.0.2")]) == "203.0.113.7")
        // Two header lines are one list, in order.
        #expect(
            client("127.0.0.1", [("x-forwarded-for", "1.2.3.4"), ("x-forwarded-for", "198.51.100.1")])
                == "198.51.100.1")
        // An untrusted peer's header changes nothing.
        #expect(client("192.0.2.50", [("x-forwarded-for", "203.0.113.7")]) == "192.0.2.50")
        // Garbage or `unknown` ends the walk at the last trusted hop.
        #expect(client("127.0.0.1", [("x-forwarded-for", "203.0.113.7, unknown")]) == "127.0.0.1")
        #expect(client("127.0.0.1", [("x-forwarded-for", "203.0.113.7, 10.0.0.9, <script>")]) == "127.0.0.1")
        #expect(client("127.0.0.1", [("x-forwarded-for", "203.0.113.7, 10.0.0.9, unknown")]) == "127.0.0.1")
        #expect(client("127.0.0.1", [("x-forwarded-for", "unknown, 10.0.0.9")]) == "10.0.0.9")
        // Ports and brackets as proxies write them; IPv6.
        #expect(client("127.0.0.1", [("x-forwarded-for", "203.0.113.7:5555")]) == "203.0.113.7")
        #expect(client("127.0.0.1", [("x-forwarded-for", "2001:db8::7")]) == "2001:db8::7")
        #expect(client("127.0.0.1", [("x-forwarded-for", "[2001:db8::7]:443")]) == "2001:db8::7")
        // Only the configured header: a Forwarded header is ignored under X-Forwarded-For, and the other way round.
        #expect(client("127.0.0.1", [("forwarded", "for=203.0.113.7")]) == "127.0.0.1")
        let forwarded = ForwardedFor(proxies: proxies, header: .forwarded)
        #expect(
            client("127.0.0.1", [("forwarded", "for=1.2.3.4, for=\"[2001:db8::9]:80\";proto=https")], forwarded)
                == "2001:db8::9")
        #expect(client("127.0.0.1", [("forwarded", "for=_hidden;by=10.0.0.1")], forwarded) == "127.0.0.1")
        #expect(client("127.0.0.1", [("x-forwarded-for", "203.0.113.7")], forwarded) == "127.0.0.1")
        // Hostile sizes: a thousand trusted hops stop after `maxHops`.
        let many = Array(repeating: "10.0.0.1", count: 1000).joined(separator: ",")
        #expect(client("127.0.0.1", [("x-forwarded-for", "203.0.113.7," + many)]) == "10.0.0.1")
    }

    /// Countries from a MaxMind-format database written here with MaxMind's own writer.
    @Test func countriesAreLookedUpInTheDatabaseForEitherFamily() throws {
        let directory = temporaryPath("countries")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/countries.mmdb"
        try writeCountryDatabase(
            path,
            [("198.51.100.0/24", "FR"), ("203.0.113.0/25", "DE"), ("2001:db8::/32", "JP"), ("127.0.0.64/28", "FR")])
        let database = try CountryDatabase(path: path)
        #expect(database.country(of: Self.address("198.51.100.77")) == "FR")
        #expect(database.country(of: Self.address("::ffff:203.0.113.5")) == "DE", "an IPv4 client on a :: socket")
        #expect(database.country(of: Self.address("203.0.113.200")) == nil)
        #expect(database.country(of: Self.address("2001:db8:1::9")) == "JP")
        #expect(database.country(of: Self.address("127.0.0.70")) == "FR")
        #expect(database.country(of: Self.address("10.1.2.3")) == nil)
        #expect(throws: CountryDatabaseError.self) { _ = try CountryDatabase(path: directory + "/missing.mmdb") }
        let garbage = directory + "/garbage.mmdb"
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: garbage))
        #expect(throws: CountryDatabaseError.self) { _ = try CountryDatabase(path: garbage) }

        var access = AccessList()
        access.geoip = database
        access.denyCountries = ["DE"]
        access.allowCountries = ["FR", "JP", AccessList.unknownCountry]
        func refusal(_ host: String) -> AdmissionRefusal? {
            access.refusal(
                AdmissionAsk(station: "a", mount: "/a.opus", kind: .tcp, client: Self.address(host), request: nil))
        }
        #expect(refusal("198.51.100.1") == nil && refusal("2001:db8::1") == nil && refusal("10.0.0.1") == nil)
        #expect(refusal("203.0.113.9") == .countryDenied)
        access.allowCountries = ["FR"]
        #expect(refusal("2001:db8::1") == .countryNotAllowed && refusal("10.0.0.1") == .countryNotAllowed)
        // The configuration: country lists need a database; codes are checked.
        let file = try InputConfigTests.parse(
            "[server]\ngeoip = \(path)\n[station a]\nupstream = http://x.example/a.mp3\ndeny_countries = de, unknown\n")
        #expect(file.stations.first?.access.denyCountries == ["DE", "unknown"])
        #expect(file.stations.first?.access.geoip == database, "the same file: no change for a reload")
        #expect(throws: (any Error).self) {
            _ = try InputConfigTests.parse("[station a]\nupstream = http://x.example/a.mp3\nallow_countries = FR\n")
        }
        #expect(throws: (any Error).self) {
            _ = try InputConfigTests.parse(
                "[station a]\nupstream = http://x.example/a.mp3\ngeoip = \(path)\ndeny_countries = France\n")
        }
    }

    @Test func listsAreReadFromTheKeyOrAFileAndAProblemNamesItsLine() throws {
        let directory = temporaryPath("access-lists")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let denied = directory + "/deny.txt"
        try "# abusers\n198.51.100.0/24\n\n2001:db8:bad::/48  # a comment\n".write(
            toFile: denied, atomically: true, encoding: .utf8)
        let agents = directory + "/agents.txt"
        try "*ripper*\n# none here\nWget/*\n".write(toFile: agents, atomically: true, encoding: .utf8)
        let file = try InputConfigTests.parse(
            """
            [server]
            deny = @\(denied)
            [station jazz]
            upstream = http://example.org/jazz.mp3
            allow = 203.0.113.0/24, 2001:db8::/32
            deny_agents = @\(agents)
            [station rock]
            upstream = http://example.org/rock.mp3
            port = 8100
            deny = none
            """)
        let jazz = try #require(file.stations.first { $0.name == "jazz" })
        let rock = try #require(file.stations.first { $0.name == "rock" })
        #expect(jazz.access.deny.ranges.map(\.description) == ["198.51.100.0/24", "2001:db8:bad::/48"])
        #expect(jazz.access.allow.ranges.count == 2 && jazz.access.denyAgents.patterns == ["*ripper*", "Wget/*"])
        #expect(rock.access.isEmpty, "a station clears the server's default with none")
        // A file saved on Windows: a byte order mark and `\r\n` line ends.
        let windows = directory + "/windows.txt"
        try "\u{FEFF}198.51.100.0/24\r\n# a comment\r\n2001:db8::/32\r\n".write(
            toFile: windows, atomically: true, encoding: .utf8)
        #expect(
            try AccessFiles.addresses("@" + windows).get().ranges.map(\.description) == [
                "198.51.100.0/24", "2001:db8::/32",
            ])
        let bad = directory + "/bad.txt"
        try "10.0.0.0/8\n10.0.0.1/8\n".write(toFile: bad, atomically: true, encoding: .utf8)
        #expect {
            _ = try InputConfigTests.parse("[station a]\nupstream = http://x.example/a.mp3\ndeny = @\(bad)\n")
        } throws: {
            "\($0)".contains("\(bad):2: 10.0.0.1/8 is not an address or ADDR/BITS")
        }
        #expect(throws: (any Error).self) {
            _ = try InputConfigTests.parse("[station a]\nupstream = http://x.example/a.mp3\ndeny_agents = curl/*\n")
        }
        #expect {
            _ = try InputConfigTests.parse("[station a]\nupstream = http://x.example/a.mp3\nallow = @relative.txt\n")
        } throws: {
            "\($0)".contains("absolute path")
        }
        // The policy the server makes: a station with a list, none for one without.
        let policy = Server.policy(file.stations)
        #expect(policy.access.keys.sorted() == ["jazz"])
    }
}
