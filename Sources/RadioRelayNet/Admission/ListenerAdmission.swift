import RadioRelaySystem
import Synchronization

/// What one listener asks to be admitted to, as the admission point sees it: which station and mount, how it came
/// (raw TCP, an HTTP stream, HLS, title events), its real address (the PROXY header's client behind a balancer) and
/// its request (none for raw TCP).
package struct AdmissionAsk: Sendable {
    package var station: String
    package var mount: String
    package var kind: ListenerProtocol
    package var client: SocketAddress
    /// What an HTTP listener asked for (the user agent, the referrer, the request line); nil for raw TCP.
    package var request: ListenerRequest?
    /// The ID its authentication backend already knows it by (`ListenerSession`); nil: a new one on admission.
    package var id: ListenerID?
    /// The user it authenticated as (`ListenerSession.username`), for the listener list.
    package var username: String?

    package init(
        station: String, mount: String, kind: ListenerProtocol, client: SocketAddress, request: ListenerRequest?,
        id: ListenerID? = nil, username: String? = nil
    ) {
        self.username = username
        self.station = station
        self.mount = mount
        self.kind = kind
        self.client = client
        self.request = request
        self.id = id
    }
}

/// The admission point's answer.
package enum AdmissionDecision: Sendable, Equatable {
    case admit
    /// Refused: an HTTP listener is answered `status` with `reason`; a raw one is closed (the reason is logged).
    case refuse(status: Int, reason: String)
    /// Sent elsewhere (HTTP: `302` with `Location`); a raw listener, which cannot be told, is closed.
    case redirect(location: String)

    /// Why, for a log line.
    package var reason: String {
        switch self {
        case .admit: "admitted"
        case .refuse(_, let reason): reason
        case .redirect(let location): "sent to \(Sanitized.text(location, limit: 256))"
        }
    }
}

/// A rule of who may listen, looked at before any place is taken, in order; the first that matches decides.
package enum AdmissionRule: Sendable, Equatable {
    /// Refuse (403) an HTTP request whose `User-Agent` starts with `prefix` (case-sensitive, as Icecast compares).
    case refuseUserAgent(prefix: String)
    /// Refuse (403; a raw listener is closed) a client within `range`.
    case refuseAddresses(AddressRange)

    func decision(_ ask: AdmissionAsk) -> AdmissionDecision? {
        switch self {
        case .refuseUserAgent(let prefix):
            guard let agent = ask.request?.userAgent, agent.hasPrefix(prefix) else { return nil }
            return .refuse(status: 403, reason: "user agent refused")
        case .refuseAddresses(let range):
            guard range.contains(ask.client) else { return nil }
            return .refuse(status: 403, reason: "address refused (\(range))")
        }
    }
}

/// The places a listener takes while it is connected, in the order they are taken: its station output's (within
/// `max_listeners`), its address's (within `max_per_ip`), the server's (the open-files budget). What each means
/// for a kind of listener is the caller's (`ListenerPlaces`); the order, the giving back of what was taken when a
/// later place is refused, and the answer are the admission's.
package enum ListenerPlace: Sendable, CaseIterable {
    case station, address, server
}

/// Where a kind of listener takes its places: a stream listener in its station's counters, a subscriber in the
/// front end's (`EventSubscribers`); an HLS session takes none (it holds no connection).
package protocol ListenerPlaces {
    /// Takes `place`, or says why it cannot be had.
    mutating func take(_ place: ListenerPlace) -> String?
    /// Gives back a place `take` gave.
    mutating func giveBack(_ place: ListenerPlace)
}

/// For listeners that hold no place (HLS sessions).
package struct NoPlaces: ListenerPlaces {
    package init() {}
    package mutating func take(_ place: ListenerPlace) -> String? { nil }
    package mutating func giveBack(_ place: ListenerPlace) {}
}

/// Who is admitted, as a pure value (tests: `AdmissionPolicyTests`): the rules first, then the station's access
/// list (`access`, by station name), then the places; a listener refused a place gets back those it took. A station
/// with `overflow` URLs sends a listener its station or the server has no place for to the next of them in turn
/// (`302 Found`; a raw listener, which cannot be told, is closed).
package struct AdmissionPolicy: Sendable, Equatable {
    package var rules: [AdmissionRule]
    /// Each station's `allow`, `deny`, `deny_agents` and country lists, by name (a station without one is not
    /// listed).
    package var access: [String: AccessList]
    /// Each station's `overflow` URLs, by name.
    package var overflow: [String: [String]]
    /// Each protected station's listener authentication, by name (`HTTPFrontLoop+Auth` carries it out before the
    /// places are taken).
    package var authentication: [String: ListenerAuthentication]

    package init(
        rules: [AdmissionRule] = [], access: [String: AccessList] = [:], overflow: [String: [String]] = [:],
        authentication: [String: ListenerAuthentication] = [:]
    ) {
        self.rules = rules
        self.access = access
        self.overflow = overflow
        self.authentication = authentication
    }

    /// The rules and the access list alone (no place taken): what a protected station's listener passes before its
    /// backend is asked, so that one the lists refuse costs no call. Nil: it may go on.
    package func screen(_ ask: AdmissionAsk) -> (decision: AdmissionDecision, refusal: AdmissionRefusal)? {
        for rule in rules {
            if let decision = rule.decision(ask) { return (decision, .rule) }
        }
        if let refusal = access[ask.station]?.refusal(ask) {
            return (.refuse(status: refusal.status, reason: refusal.text), refusal)
        }
        // A protected station's listener passes its authentication on the HTTP address (`HTTPFrontLoop+Auth`, an
        // HLS player once, then with its pass); a raw TCP connection carries no credentials: refused.
        if ask.kind == .tcp, authentication[ask.station]?.isOn == true {
            return (.refuse(status: 403, reason: "protected station: raw TCP carries no credentials"), .authRefused)
        }
        return nil
    }

    package func decide<Places: ListenerPlaces>(_ ask: AdmissionAsk, places: inout Places) -> AdmissionDecision {
        decideWithReason(ask, places: &places, turn: { 0 }).decision
    }

    /// The decision, and why a refusal (or a redirect) was made (what `/metrics` counts).
    /// - Parameter turn: the next overflow turn (a counter the admission point keeps), asked only for a redirect.
    package func decideWithReason<Places: ListenerPlaces>(
        _ ask: AdmissionAsk, places: inout Places, turn: () -> Int
    ) -> (decision: AdmissionDecision, refusal: AdmissionRefusal?) {
        let (decision, refusal) = placeOrRefuse(ask, places: &places)
        guard refusal == .stationFull || refusal == .serverFull, let urls = overflow[ask.station], !urls.isEmpty
        else { return (decision, refusal) }
        let index = Int(UInt(bitPattern: turn()) % UInt(urls.count))
        return (.redirect(location: urls[index]), refusal)
    }

    private func placeOrRefuse<Places: ListenerPlaces>(
        _ ask: AdmissionAsk, places: inout Places
    ) -> (decision: AdmissionDecision, refusal: AdmissionRefusal?) {
        if let screened = screen(ask) { return screened }
        if let refusal = places.take(.station) { return (.refuse(status: 503, reason: refusal), .stationFull) }
        if let refusal = places.take(.address) {
            places.giveBack(.station)
            return (.refuse(status: 503, reason: refusal), .addressFull)
        }
        if let refusal = places.take(.server) {
            places.giveBack(.address)
            places.giveBack(.station)
            return (.refuse(status: 503, reason: refusal), .serverFull)
        }
        return (.admit, nil)
    }
}

/// The one place that admits a listener of any kind — raw TCP, an HTTP stream (Opus, a rendition, MP3), an HLS
/// player's session, a title-event subscriber — handed to every output and the HTTP front end with the listener
/// services. It answers from its `AdmissionPolicy` (replaced whole by a reload) and names each admitted listener
/// (`ListenerID`) in the `roster`, which the status endpoint lists.
package final class ListenerAdmission: Sendable {
    private let current: LockedBox<AdmissionPolicy>
    package let roster: ListenerRoster
    /// Refusals by reason, in `AdmissionRefusal.allCases` order.
    private let refusals = LockedBox([Int](repeating: 0, count: AdmissionRefusal.allCases.count))
    /// Listeners sent to an overflow URL, which also counts the turn.
    private let redirects = Atomic<Int>(0)

    /// The calls to the protected stations' backends and their htpasswd checks (a service the server starts).
    package let authenticator: Authenticator

    package init(
        policy: AdmissionPolicy = AdmissionPolicy(), roster: ListenerRoster = ListenerRoster(),
        authenticator: Authenticator = Authenticator()
    ) {
        current = LockedBox(policy)
        self.roster = roster
        self.authenticator = authenticator
    }

    package var policy: AdmissionPolicy { current.snapshot }

    package func setPolicy(_ policy: AdmissionPolicy) { current.withLock { $0 = policy } }

    /// Decides; on `.admit` the listener has its places and an entry in the roster, whose ID it carries until it
    /// leaves (`leave`).
    /// - Parameter place: the station and mount as the caller keeps them (an output's, shared by its listeners);
    ///   nil: made from the ask.
    package func admit<Places: ListenerPlaces>(
        _ ask: AdmissionAsk, places: inout Places, now: Double, at place: ListenerMount? = nil
    ) -> (AdmissionDecision, ListenerEntry?) {
        let (decision, refusal) = policy.decideWithReason(ask, places: &places) {
            redirects.add(1, ordering: .relaxed).oldValue
        }
        if let refusal { count(refusal) }
        guard decision == .admit else { return (decision, nil) }
        let entry = ListenerEntry(
            id: ask.id ?? .next(),
            place: place?.of(ask.kind) ?? ListenerMount(station: ask.station, mount: ask.mount, kind: ask.kind),
            address: Self.shownAddress(ask.client), userAgent: ask.request?.userAgent, username: ask.username,
            connectedAt: now)
        roster.add(entry)
        return (decision, entry)
    }

    /// The rules and access lists alone (`AdmissionPolicy.screen`), a refusal counted.
    package func screen(_ ask: AdmissionAsk) -> AdmissionDecision? {
        guard let (decision, refusal) = policy.screen(ask) else { return nil }
        count(refusal)
        return decision
    }

    /// A refusal made elsewhere (an authentication's), counted with the others.
    package func count(_ refusal: AdmissionRefusal) {
        if let index = AdmissionRefusal.allCases.firstIndex(of: refusal) { refusals.withLock { $0[index] &+= 1 } }
    }

    /// Listeners sent to an overflow URL since start.
    package var redirectCount: Int { redirects.load(ordering: .relaxed) }

    /// Refusals since start, by reason.
    package var refusalCounts: [(AdmissionRefusal, Int)] {
        Array(zip(AdmissionRefusal.allCases, refusals.snapshot))
    }

    /// The listener is gone: out of the roster.
    package func leave(_ entry: ListenerEntry) { roster.remove(entry.id) }

    /// An address as the access log and the listener list show it: an IPv4 client without the `::ffff:` of a
    /// dual-stack socket, any other address as it is.
    package static func shownAddress(_ peer: SocketAddress) -> String {
        let host = peer.host
        return HostKey(peer).isIPv4 && host.hasPrefix("::ffff:") ? String(host.dropFirst(7)) : host
    }
}
