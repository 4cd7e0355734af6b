import RadioRelaySystem

/// Who may listen to a station, by the listener's real address, its country and its user agent (`allow`, `deny`,
/// `deny_agents`, `geoip` with `allow_countries` and `deny_countries`): a value of the admission policy, looked at
/// before any place is taken. Denied agents first, then denied addresses, then — when an allow list is set —
/// addresses outside it, then the countries. A raw TCP listener has no user agent: the address and country lists
/// apply to it.
package struct AccessList: Sendable, Equatable {
    /// When not empty, only these networks may listen.
    package var allow = AddressSet([])
    package var deny = AddressSet([])
    package var denyAgents = AgentPatterns()
    /// The country database the country lists are read with (`geoip`).
    package var geoip: CountryDatabase?
    /// ISO 3166-1 codes (`FR`), and `unknown` for an address the database does not know (a private network).
    package var allowCountries: Set<String> = []
    package var denyCountries: Set<String> = []

    /// What a country list holds for an address without a country.
    package static let unknownCountry = "unknown"

    package init(
        allow: AddressSet = AddressSet([]), deny: AddressSet = AddressSet([]),
        denyAgents: AgentPatterns = AgentPatterns()
    ) {
        self.allow = allow
        self.deny = deny
        self.denyAgents = denyAgents
    }

    package var isEmpty: Bool {
        allow.isEmpty && deny.isEmpty && denyAgents.isEmpty && allowCountries.isEmpty && denyCountries.isEmpty
    }

    /// Why `ask` is refused, or nil when the list lets it through.
    package func refusal(_ ask: AdmissionAsk) -> AdmissionRefusal? {
        if let agent = ask.request?.userAgent, denyAgents.matches(agent) { return .agentDenied }
        if deny.contains(ask.client) { return .addressDenied }
        if !allow.isEmpty && !allow.contains(ask.client) { return .addressNotAllowed }
        guard let geoip, !(allowCountries.isEmpty && denyCountries.isEmpty) else { return nil }
        let country = geoip.country(of: ask.client) ?? Self.unknownCountry
        if denyCountries.contains(country) { return .countryDenied }
        if !allowCountries.isEmpty && !allowCountries.contains(country) { return .countryNotAllowed }
        return nil
    }
}

/// Why a listener was refused, as `/metrics` counts it (`radio_relay_listeners_refused_total{reason}`) and the log
/// says it.
package enum AdmissionRefusal: String, Sendable, CaseIterable, Codable {
    case agentDenied = "agent_denied"
    case addressDenied = "address_denied"
    case addressNotAllowed = "address_not_allowed"
    case countryDenied = "country_denied"
    case countryNotAllowed = "country_not_allowed"
    /// A rule of the policy's own list (`AdmissionRule`).
    case rule
    case stationFull = "station_full"
    case addressFull = "address_full"
    case serverFull = "server_full"
    /// Credentials refused (by the backend, or the htpasswd file), or none given to a protected station.
    case authRefused = "auth_refused"
    /// The backend could not answer in time (`auth_failure = refuse`), or too many listeners wait for it.
    case authUnavailable = "auth_unavailable"

    /// The answer: 403 for who the listener is, 503 for a place it could not have.
    package var status: Int {
        switch self {
        case .agentDenied, .addressDenied, .addressNotAllowed, .countryDenied, .countryNotAllowed, .rule: 403
        case .stationFull, .addressFull, .serverFull, .authUnavailable: 503
        case .authRefused: 401
        }
    }

    package var text: String {
        switch self {
        case .agentDenied: "user agent denied (deny_agents)"
        case .addressDenied: "address denied (deny)"
        case .addressNotAllowed: "address not allowed (allow)"
        case .countryDenied: "country denied (deny_countries)"
        case .countryNotAllowed: "country not allowed (allow_countries)"
        case .rule: "refused by a rule"
        case .stationFull: "station full"
        case .addressFull: "too many listeners from this address"
        case .serverFull: "server full"
        case .authRefused: "authentication refused"
        case .authUnavailable: "authentication unavailable"
        }
    }
}

/// User-agent patterns (`deny_agents`): shell-style globs — `*` any run of characters, `?` one — matched against
/// the whole user agent, ASCII letters in either case (`*streamripper*` catches `Streamripper/1.64`). The work per
/// listener is bounded: at most `limit` patterns of `maxLength` bytes each, against the agent's first
/// `agentPrefix` bytes (a longer agent is matched on those).
package struct AgentPatterns: Sendable, Equatable, CustomStringConvertible {
    package let patterns: [String]
    private let folded: [[UInt8]]

    package static let limit = 1000
    package static let maxLength = 256
    package static let agentPrefix = 512

    /// None: matches nothing.
    package init() {
        patterns = []
        folded = []
    }

    /// nil when there are more than `limit`, or one is empty or longer than `maxLength`.
    package init?(_ patterns: [String]) {
        guard patterns.count <= Self.limit, patterns.allSatisfy({ (1...Self.maxLength).contains($0.utf8.count) })
        else { return nil }
        self.patterns = patterns
        folded = patterns.map { $0.utf8.map(Self.fold) }
    }

    package var isEmpty: Bool { patterns.isEmpty }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.patterns == rhs.patterns }

    package func matches(_ agent: String) -> Bool {
        guard !folded.isEmpty else { return false }
        let text = agent.utf8.prefix(Self.agentPrefix).map(Self.fold)
        return folded.contains { Self.glob($0, text) }
    }

    /// ASCII upper case to lower case; every other byte as it is.
    private static func fold(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// Whether `pattern` matches all of `text`: the classic two-pointer walk, going back only to the last `*`
    /// (at most pattern × text steps, whatever the bytes).
    static func glob(_ pattern: [UInt8], _ text: [UInt8]) -> Bool {
        let star = UInt8(ascii: "*")
        let any = UInt8(ascii: "?")
        var p = 0
        var t = 0
        var lastStar: Int?
        var resume = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == any || (pattern[p] != star && pattern[p] == text[t]) {
                p += 1
                t += 1
            } else if p < pattern.count, pattern[p] == star {
                lastStar = p
                resume = t
                p += 1
            } else if let star = lastStar {
                p = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == star { p += 1 }
        return p == pattern.count
    }

    package var description: String {
        patterns.count <= 3 ? patterns.joined(separator: ", ") : "\(patterns.count) patterns"
    }
}
