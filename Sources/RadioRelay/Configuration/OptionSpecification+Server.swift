import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The server's options: the `[server]` keys of a config file (and, where `isFlag`, `serve`'s flags), each with its
/// reader, range and reload rule. Defaults live in `ServerSettings`.
extension OptionSpecification {
    /// A server setting that reads the text with `read` and stores the value with `store`; `value` is the setting's
    /// current value (compared by a reload, quoted by its log line through `shown`).
    static func server<Value: Equatable & Sendable>(
        _ read: @escaping @Sendable (String) -> Value?,
        _ store: @escaping @Sendable (inout ServerSettings, Value) -> Void,
        value: @escaping @Sendable (ServerSettings) -> Value, shown: @escaping @Sendable (Value) -> String
    ) -> Target {
        .server(
            { text, settings in
                guard let parsed = read(text) else { return false }
                store(&settings, parsed)
                return true
            }, differs: { value($0) != value($1) }, shown: { shown(value($0)) },
            adopt: { running, new in store(&running, value(new)) })
    }

    static let status = OptionSpecification(
        name: "status", placeholder: "ADDR:PORT",
        summary: "status endpoint: /status.json, /metrics, /health (default: off)",
        accepts: "ADDR:PORT such as 127.0.0.1:8080 or [::1]:8080, or off",
        target: server(
            Values.listenAddressOrOff(ListenAddress.init(parsing:)), { $0.status = $1 }, value: \.status,
            shown: { $0?.description ?? "off" }),
        reload: .restartsProcess)

    static let http = OptionSpecification(
        name: "http", placeholder: "[ADDR:]PORT",
        summary: "also serve HTTP listeners (browsers, apps) at /NAME.opus, a page at / (default: off)",
        accepts: "PORT, ADDR:PORT such as 0.0.0.0:8001 or [::]:8001, or off",
        target: server(
            Values.listenAddressOrOff(ListenAddress.init(parsingPortOrAddress:)), { $0.http = $1 }, value: \.http,
            shown: { $0?.description ?? "off" }),
        reload: .restartsProcess)

    /// A config file's `[server] http_proxy_protocol` (no flag: `serve --proxy-protocol` covers `--http` too).
    static let httpProxyProtocol = OptionSpecification(
        name: "http-proxy-protocol", placeholder: "yes|no",
        summary: "each HTTP connection starts with a load balancer's PROXY header (default no)",
        accepts: "yes or no",
        target: server(
            Values.yesNo, { $0.httpProxyProtocol = $1 }, value: \.httpProxyProtocol, shown: { $0 ? "yes" : "no" }),
        isFlag: false, reload: .inPlace)

    /// A config file's `[server] http_proxy_from` (no flag: `serve --proxy-from` covers `--http` too).
    static let httpProxyFrom = OptionSpecification(
        name: "http-proxy-from", placeholder: "ADDRS",
        summary: "balancers whose PROXY header the HTTP address believes (default 127.0.0.0/8, ::1)",
        accepts: TrustedProxies.accepts,
        target: server(
            TrustedProxies.init(parsing:), { $0.httpProxyFrom = $1 }, value: { $0.httpProxyFrom ?? .loopback },
            shown: { "\($0)" }),
        isFlag: false, reload: .inPlace)

    /// `[server] public_url`: where listeners reach the HTTP address (behind the HTTPS front), for playlists and
    /// `/status-json.xsl`.
    /// A config file's `[server] forwarded_from`: reverse proxies in HTTP mode whose header names the client.
    static let forwardedFrom = OptionSpecification(
        name: "forwarded-from", placeholder: "ADDRS",
        summary: "reverse proxies in HTTP mode whose forwarded_header names the client (default: none)",
        accepts: "none, or " + TrustedProxies.accepts,
        target: server(
            { $0 == "none" ? TrustedProxies([]) : TrustedProxies(parsing: $0) },
            { $0.forwardedFrom = $1.ranges.isEmpty ? nil : $1 }, value: { $0.forwardedFrom ?? TrustedProxies([]) },
            shown: { $0.ranges.isEmpty ? "none" : "\($0)" }),
        isFlag: false, reload: .inPlace)

    /// A config file's `[server] forwarded_header`: which header those proxies write.
    static let forwardedHeader = OptionSpecification(
        name: "forwarded-header", placeholder: "NAME",
        summary: "the header forwarded_from proxies write: X-Forwarded-For (default) or Forwarded",
        accepts: "X-Forwarded-For or Forwarded",
        target: server(
            { ForwardedFor.Header(rawValue: $0.lowercased()) }, { $0.forwardedHeader = $1 },
            value: \.forwardedHeader, shown: { $0 == .forwarded ? "Forwarded" : "X-Forwarded-For" }),
        isFlag: false, reload: .inPlace)

    static let publicURL = OptionSpecification(
        name: "public-url", placeholder: "URL",
        summary: "where listeners reach the HTTP address, for playlists' URLs (default: the request's Host)",
        accepts: PublicURL.accepts,
        target: server(
            PublicURL.init, { $0.publicURL = $1 }, value: \.publicURL, shown: { $0.map { "\($0)" } ?? "none" }),
        isFlag: false, reload: .inPlace)

    /// `[server] status_token`: the bearer token `/status.json` and `/metrics` want.
    static let statusToken = OptionSpecification(
        name: "status-token", placeholder: "TOKEN", summary: "the bearer token of /status.json and /metrics",
        accepts: StatusToken.accepts,
        target: server(
            StatusToken.init, { $0.statusAccess.token = $1 }, value: \.statusAccess.token,
            shown: { $0 == nil ? "none" : "set" }),
        isFlag: false, acceptsCredential: true, reload: .inPlace)

    /// `[server] status_hosts`: the host names a status request's `Host` may name besides IP literals and localhost.
    static let statusHosts = OptionSpecification(
        name: "status-hosts", placeholder: "NAMES", summary: "host names the status endpoint answers for",
        accepts: "host names, comma-separated, e.g. relay1.example.org, relay1",
        target: server(
            Values.hostNames, { $0.statusAccess = StatusAccess(token: $0.statusAccess.token, names: $1) },
            value: \.statusAccess.names, shown: { $0.joined(separator: ", ") }),
        isFlag: false, reload: .inPlace)

    /// `--network-threads`, a config file's `[server] network_threads`: the loops that serve every output's
    /// listeners.
    static let networkThreads = OptionSpecification(
        name: "network-threads", placeholder: "N",
        summary: "loops serving listeners, shared by all stations (default auto: the CPUs it may use)",
        accepts: "auto or 1 to \(NetworkPool.maxThreads)",
        target: server(
            Values.networkThreads, { $0.networkThreads = $1 }, value: \.networkThreads,
            shown: { $0.map(String.init) ?? "auto" }),
        reload: .restartsProcess)

    /// `--access-log FILE`, a config file's `[server] access_log`: a line per listener when it leaves.
    static let accessLog = OptionSpecification(
        name: "access-log", placeholder: "FILE",
        summary: "a line per listener when it leaves, in Icecast's combined format (default: none)",
        accepts: "a file's absolute path",
        target: server(Values.absolutePath, { $0.accessLog = $1 }, value: \.accessLog, shown: { $0 ?? "none" }),
        reload: .restartsProcess)

    static let logLevel = OptionSpecification(
        name: "log-level", placeholder: "LEVEL", summary: "least important log lines shown (default info)",
        accepts: "error, warning, notice, info or debug",
        target: server(Log.Priority.init(name:), { $0.logLevel = $1 }, value: \.logLevel, shown: { "\($0.name)" }),
        reload: .inPlace)

    /// The server's settings, in the order messages list their keys: `[server]` keys, and `serve` flags where
    /// `isFlag`.
    static let serverOptions: [OptionSpecification] = [
        status, statusToken, statusHosts, http, httpProxyProtocol, httpProxyFrom, forwardedFrom, forwardedHeader,
        publicURL, adminUser, adminPassword, networkThreads, accessLog, logLevel,
    ]

    /// The keys a config file has that are no flag of `serve`.
    static var fileOnly: [OptionSpecification] { serverOptions.filter { !$0.isFlag } }

    /// The server option whose config-file key is `key`.
    static func serverOption(key: String) -> OptionSpecification? { serverOptions.first { $0.key == key } }
}
