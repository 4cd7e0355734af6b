import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `serve`'s options about who may listen and for how long: the access lists (addresses, countries, user agents), the
/// session limit and the overflow URLs. Station keys that `[server]` may set for every station.
extension OptionSpecification {
    static let listenerRules: [OptionSpecification] = [
        .init(
            name: "max-listener-duration", placeholder: "S",
            summary: "a listener's stream ends after S seconds, at a page boundary (default 0: no limit)",
            accepts: "\(Values.text(BroadcasterConfiguration.listenerDurationRange)) seconds, e.g. 3600",
            setting: station(
                Values.seconds(BroadcasterConfiguration.listenerDurationRange), \.broadcaster.maxListenerDuration),
            isServerDefault: true, reload: .inPlace),
        .init(
            name: "overflow", placeholder: "URLS",
            summary: "when the station or server is full, send HTTP listeners to these URLs in turn (302)",
            accepts: "none, or absolute http:// or https:// URLs, comma-separated",
            setting: station({ try? AccessFiles.overflowURLs($0).get() }, \.overflow), isServerDefault: true,
            reload: .inPlace, refusal: { AccessFiles.overflowURLs($0).failureText }, quoted: { Redaction.text($0) }),
        .init(
            name: "allow", placeholder: "ADDRS",
            summary: "only these networks may listen: ADDR[/BITS], … or @FILE (default: everyone)",
            accepts: "none, IP addresses or networks, comma-separated, or @FILE with one per line",
            setting: station(
                { try? AccessFiles.addresses($0).get() }, { $0.access.allow = $1 }, compared: \.access.allow),
            isServerDefault: true, reload: .inPlace, refusal: { AccessFiles.addresses($0).failureText }),
        .init(
            name: "deny", placeholder: "ADDRS",
            summary: "these networks may not listen: ADDR[/BITS], … or @FILE (default: none)",
            accepts: "none, IP addresses or networks, comma-separated, or @FILE with one per line",
            setting: station(
                { try? AccessFiles.addresses($0).get() }, { $0.access.deny = $1 }, compared: \.access.deny),
            isServerDefault: true, reload: .inPlace, refusal: { AccessFiles.addresses($0).failureText }),
        .init(
            name: "deny-agents", placeholder: "@FILE",
            summary: "user agents that may not listen: @FILE of patterns, * and ? wildcards (default: none)",
            accepts: "none, or @FILE with one pattern per line",
            setting: station(
                { try? AccessFiles.agents($0).get() }, { $0.access.denyAgents = $1 },
                compared: \.access.denyAgents),
            isServerDefault: true, reload: .inPlace, refusal: { AccessFiles.agents($0).failureText }),
        .init(
            name: "geoip", placeholder: "FILE",
            summary: "a MaxMind-format country database (.mmdb) for the country lists (default: none)",
            accepts: "none, or the absolute path of a MaxMind-format database",
            setting: station(
                { AccessFiles.database($0).accepted }, { $0.access.geoip = $1 }, compared: \.access.geoip),
            isServerDefault: true, reload: .inPlace, refusal: { AccessFiles.database($0).failureText }),
        .init(
            name: "allow-countries", placeholder: "CODES",
            summary: "only listeners from these countries (geoip): FR, DE, … or unknown (default: all)",
            accepts: "none, or two-letter country codes (and unknown), comma-separated, or @FILE",
            setting: station(
                { try? AccessFiles.countries($0).get() }, { $0.access.allowCountries = $1 },
                compared: \.access.allowCountries),
            isServerDefault: true, reload: .inPlace, refusal: { AccessFiles.countries($0).failureText }),
        .init(
            name: "deny-countries", placeholder: "CODES",
            summary: "no listeners from these countries (geoip): FR, DE, … or unknown (default: none)",
            accepts: "none, or two-letter country codes (and unknown), comma-separated, or @FILE",
            setting: station(
                { try? AccessFiles.countries($0).get() }, { $0.access.denyCountries = $1 },
                compared: \.access.denyCountries),
            isServerDefault: true, reload: .inPlace, refusal: { AccessFiles.countries($0).failureText }),
    ]
}
