import RadioRelayNet
import RadioRelaySystem

extension TrustedProxies {
    /// What start-up and `check-config` say once about a port that expects PROXY headers without `proxy_from` (or
    /// `http_proxy_from`): only loopback is believed, so a balancer on another machine needs the setting.
    package static func notes(
        stations: [StationConfiguration], httpProxyProtocol: Bool, httpProxyFrom: TrustedProxies?
    ) -> [String] {
        var ports = stations.filter { $0.broadcaster.proxyProtocol && $0.broadcaster.proxyFrom == nil }.map {
            "station \($0.name)"
        }
        if httpProxyProtocol && httpProxyFrom == nil { ports.append("http") }
        guard !ports.isEmpty else { return [] }
        return [
            "PROXY headers are believed from loopback only (127.0.0.0/8, ::1) on \(ports.joined(separator: ", ")): "
                + "set proxy_from (http_proxy_from for the HTTP address) to a balancer's address on another machine"
        ]
    }
}
