import RadioRelayNet
import RadioRelaySystem
import Testing

/// The admission point's rules and places as values: the rules first, in order; then the places, in order, each
/// given back when a later one is refused.
@Suite struct AdmissionPolicyTests {
    /// Places that record what was taken and given back, refusing the ones named.
    struct Ledger: ListenerPlaces {
        var refuses: Set<ListenerPlace> = []
        var held: [ListenerPlace] = []
        var log: [String] = []

        mutating func take(_ place: ListenerPlace) -> String? {
            log.append("take \(place)")
            if refuses.contains(place) { return "no \(place)" }
            held.append(place)
            return nil
        }

        mutating func giveBack(_ place: ListenerPlace) {
            log.append("give \(place)")
            held.removeAll { $0 == place }
        }
    }

    static func ask(_ kind: ListenerProtocol, agent: String? = nil, from host: String = "192.0.2.7") -> AdmissionAsk {
        AdmissionAsk(
            station: "jazz", mount: "/jazz.opus", kind: kind, client: SocketAddress(host: host, port: 40_000)!,
            request: kind == .tcp ? nil : ListenerRequest(line: "GET /jazz.opus HTTP/1.1", userAgent: agent))
    }

    @Test func placesAreTakenInOrderAndGivenBackWhenALaterOneIsRefused() {
        let policy = AdmissionPolicy()
        var all = Ledger()
        #expect(policy.decide(Self.ask(.tcp), places: &all) == .admit)
        #expect(all.held == [.station, .address, .server])
        var noServer = Ledger(refuses: [.server])
        #expect(policy.decide(Self.ask(.http), places: &noServer) == .refuse(status: 503, reason: "no server"))
        #expect(noServer.held.isEmpty)
        #expect(noServer.log == ["take station", "take address", "take server", "give address", "give station"])
        var noAddress = Ledger(refuses: [.address])
        #expect(policy.decide(Self.ask(.events), places: &noAddress) == .refuse(status: 503, reason: "no address"))
        #expect(noAddress.held.isEmpty && !noAddress.log.contains("take server"))
        var noStation = Ledger(refuses: [.station])
        #expect(policy.decide(Self.ask(.http), places: &noStation) == .refuse(status: 503, reason: "no station"))
        #expect(noStation.log == ["take station"])
    }

    @Test func aRuleDecidesBeforeAnyPlaceIsTaken() throws {
        let range = try #require(AddressRange("198.51.100.0/24"))
        let policy = AdmissionPolicy(rules: [.refuseUserAgent(prefix: "Blocked/1.0"), .refuseAddresses(range)])
        for kind in [ListenerProtocol.http, .hls, .events] {
            var places = Ledger()
            let decision = policy.decide(Self.ask(kind, agent: "Blocked/1.0 (Linux)"), places: &places)
            #expect(decision == .refuse(status: 403, reason: "user agent refused"), "\(kind)")
            #expect(places.log.isEmpty)
            var others = Ledger()
            #expect(policy.decide(Self.ask(kind, agent: "blocked/1.0"), places: &others) == .admit, "case-sensitive")
        }
        // Raw TCP has no request: an agent rule cannot refuse it, an address rule does.
        var raw = Ledger()
        #expect(policy.decide(Self.ask(.tcp), places: &raw) == .admit)
        var fromRange = Ledger()
        let refused = policy.decide(Self.ask(.tcp, from: "198.51.100.200"), places: &fromRange)
        #expect(refused == .refuse(status: 403, reason: "address refused (198.51.100.0/24)"))
        #expect(fromRange.log.isEmpty)
        // An IPv4 client of a dual-stack socket is the same client.
        var mapped = Ledger()
        #expect(policy.decide(Self.ask(.http, from: "::ffff:198.51.100.9"), places: &mapped) != .admit)
    }

    @Test func idsAreDecimalUniqueAndIncreasing() {
        let first = ListenerID.next()
        let second = ListenerID.next()
        #expect(second > first && second.value == first.value + 1)
        #expect(ListenerID("42") == ListenerID(42) && ListenerID("18446744073709551615")?.value == .max)
        for bad in ["", "-1", "+1", " 1", "1 ", "0x10", "18446744073709551616", "١"] {
            #expect(ListenerID(Substring(bad)) == nil, "\(bad)")
        }
        // Admitted listeners of one admission point get increasing IDs and leave the roster when they go.
        let admission = ListenerAdmission()
        var places = NoPlaces()
        let (_, a) = admission.admit(Self.ask(.hls, agent: "x"), places: &places, now: 0)
        let (_, b) = admission.admit(Self.ask(.tcp), places: &places, now: 1)
        guard let a, let b else {
            Issue.record("not admitted")
            return
        }
        #expect(b.id > a.id && admission.roster.count == 2)
        #expect(admission.roster.list(limit: 1).entries.map(\.id) == [a.id])
        #expect(a.address == "192.0.2.7" && a.userAgent == "x" && b.userAgent == nil && b.kind == .tcp)
        admission.leave(a)
        #expect(admission.roster.list(limit: 10).entries.map(\.id) == [b.id])
        admission.setPolicy(AdmissionPolicy(rules: [.refuseUserAgent(prefix: "")]))
        let (decision, none) = admission.admit(Self.ask(.http, agent: "any"), places: &places, now: 2)
        #expect(decision == .refuse(status: 403, reason: "user agent refused") && none == nil)
        #expect(admission.roster.count == 1)
    }
}
