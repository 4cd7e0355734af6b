import Glibc

/// No two stations may listen where one would take the other's connections, nor where the status endpoint listens:
/// the same port on the same address, or on any address when either side is a wildcard (`0.0.0.0` or `::`).
extension ConfigFileReader {
    mutating func checkAddresses(_ stations: [PlacedStation], status: ConfigFile.ListenAddress?, statusLine: Int?) {
        for (index, placed) in stations.enumerated() {
            let address = Self.address(of: placed.station)
            if let other = stations[..<index].first(where: { Self.overlap(address, Self.address(of: $0.station)) }) {
                problems.add(
                    placed.line,
                    "station \(placed.station.name) on \(address) overlaps station \(other.station.name) on "
                        + "\(Self.address(of: other.station)) (line \(other.line)): give each station its own port")
            }
            if let status, Self.overlap(address, status) {
                let place = statusLine.map { "[server] status, line \($0)" } ?? "the default: set status in [server]"
                problems.add(
                    placed.line,
                    "station \(placed.station.name) on \(address) overlaps the status address \(status) (\(place))")
            }
        }
    }

    /// The HTTP address overlaps no station and not the status endpoint, and no two stations share a mount.
    mutating func checkHTTP(
        _ stations: [PlacedStation], server: ConfigFile.ServerSettings, httpLine: Int?, statusLine: Int?
    ) {
        if let http = server.http {
            let line = httpLine ?? 0
            for placed in stations where Self.overlap(Self.address(of: placed.station), http) {
                problems.add(
                    line,
                    "http = \(http) overlaps station \(placed.station.name) on \(Self.address(of: placed.station)) "
                        + "(line \(placed.line)): give HTTP its own port")
            }
            if let status = server.status, Self.overlap(http, status) {
                let place = statusLine.map { "line \($0)" } ?? "the default"
                problems.add(line, "http = \(http) overlaps the status address \(status) (\(place))")
            }
        }
        var mounts: [String: PlacedStation] = [:]
        for placed in stations {
            let path = placed.station.mountPath
            if let other = mounts[path] {
                problems.add(
                    placed.line,
                    "station \(placed.station.name): mount \(path) is station \(other.station.name)'s too (line "
                        + "\(other.line)): set mount = in one of them")
            }
            mounts[path] = mounts[path] ?? placed
        }
    }

    static func address(of station: StationConfiguration) -> ConfigFile.ListenAddress {
        ConfigFile.ListenAddress(host: station.broadcaster.bind, port: station.broadcaster.port)
    }

    /// Whether binding both would clash. Addresses are compared as bytes, so `::1` and `0:0::1` are one address.
    static func overlap(_ a: ConfigFile.ListenAddress, _ b: ConfigFile.ListenAddress) -> Bool {
        guard a.port == b.port, let x = bytes(of: a.host), let y = bytes(of: b.host) else { return false }
        return x.allSatisfy { $0 == 0 } || y.allSatisfy { $0 == 0 } || x == y
    }

    /// The address's 4 or 16 bytes (`inet_pton`); nil for anything but an IP literal.
    static func bytes(of host: String) -> [UInt8]? {
        var v6 = [UInt8](repeating: 0, count: 16)
        for (family, count) in [(AF_INET, 4), (AF_INET6, 16)] {
            let parsed = v6.withUnsafeMutableBytes { inet_pton(family, host, $0.baseAddress) }
            if parsed == 1 { return Array(v6.prefix(count)) }
        }
        return nil
    }
}
