import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

extension ServerConfiguration {
    /// A protected station's `overflow` URLs that point at a mount of this same server (its HTTP address by
    /// loopback, its bind address or `public_url`'s host, and its port) whose station is not protected: a listener
    /// sent there would listen unchecked. Each with the index of the station that names it. (An edge elsewhere is
    /// the operator's to protect the same way: the README says so.)
    static func overflowProblems(server: ServerSettings, stations: [StationConfiguration]) -> [(Int, String)] {
        guard let http = server.http else { return [] }
        var hosts: Set<String> = ["127.0.0.1", "localhost", "::1", http.host.lowercased()]
        if let base = server.publicURL?.base, let authority = base.split(separator: "/").dropFirst().first {
            hosts.insert(IcecastStatus.hostName(String(authority)).lowercased())
        }
        var owners: [String: StationConfiguration] = [:]
        for station in stations {
            for output in station.outputSettings { owners["/" + output.mount] = station }
        }
        var problems: [(Int, String)] = []
        for (index, station) in stations.enumerated() where station.authentication.isOn {
            for url in station.overflow {
                guard let (host, port, path) = Self.parts(of: url), hosts.contains(host.lowercased()),
                    port == http.port, let target = owners[path], !target.authentication.isOn
                else { continue }
                problems.append(
                    (
                        index,
                        "station \(station.name) is protected, but its overflow \(Redaction.text(url)) is station "
                            + "\(target.name)'s mount \(path), which is not: a listener sent there would listen "
                            + "unchecked; protect \(target.name) too (listener_add or htpasswd), or send the overflow "
                            + "elsewhere"
                    ))
            }
        }
        return problems
    }

    /// An overflow URL's host, port (80 or 443 when it names none) and path without its query.
    private static func parts(of url: String) -> (host: String, port: Int, path: String)? {
        let lower = url.lowercased()
        let secure = lower.hasPrefix("https://")
        guard secure || lower.hasPrefix("http://") else { return nil }
        let rest = url.dropFirst(secure ? 8 : 7)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let path = String(rest.dropFirst(authority.count).prefix { $0 != "?" && $0 != "#" })
        guard let split = HostPort.split(authority) else { return nil }
        let port = split.port.map { Port.parse($0) } ?? (secure ? 443 : 80)
        guard let port else { return nil }
        return (String(split.host), port, path.isEmpty ? "/" : path)
    }
}
