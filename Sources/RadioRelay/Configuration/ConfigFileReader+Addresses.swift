import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// No two outputs (stations and renditions) may listen where one would take the other's connections, nor where the
/// status endpoint listens:
/// the same port on the same address, or on any address when either side is a wildcard (`0.0.0.0` or `::`).
extension ConfigFileReader {
    /// One listening output: a station's own or a rendition's, with the line its address comes from.
    struct PlacedAddress {
        let what: String
        let address: ListenAddress
        let line: Int
        let isStation: Bool
    }

    mutating func checkAddresses(_ stations: [PlacedStation], status: ListenAddress?, statusLine: Int?) {
        var outputs: [PlacedAddress] = []
        for placed in stations {
            let station = placed.station
            for (index, output) in station.outputSettings.enumerated()
            where index < placed.addressLines.count && output.broadcaster.rawListeners {
                outputs.append(
                    PlacedAddress(
                        what: StationConfiguration.describe(output, of: station.name),
                        address: ListenAddress(host: output.broadcaster.bind, port: output.broadcaster.port),
                        line: placed.addressLines[index], isStation: output.name == nil))
            }
        }
        for (index, placed) in outputs.enumerated() {
            let address = placed.address
            if let other = outputs[..<index].first(where: { Self.overlap(address, $0.address) }) {
                let advice = placed.isStation && other.isStation ? "station" : "output"
                problems.add(
                    placed.line,
                    "\(placed.what) on \(address) overlaps \(other.what) on \(other.address) (line \(other.line)): give "
                        + "each \(advice) its own port")
            }
            if let status, Self.overlap(address, status) {
                let place = statusLine.map { "[server] status, line \($0)" } ?? "the default: set status in [server]"
                problems.add(
                    placed.line, "\(placed.what) on \(address) overlaps the status address \(status) (\(place))")
            }
        }
    }

    /// The HTTP address overlaps no output (a station's or a rendition's port) and not the status endpoint.
    mutating func checkHTTP(
        _ stations: [PlacedStation], server: ServerSettings, httpLine: Int?, statusLine: Int?
    ) {
        guard let http = server.http else { return }
        let line = httpLine ?? 0
        for placed in stations {
            let station = placed.station
            for (index, output) in station.outputSettings.enumerated() where output.broadcaster.rawListeners {
                let address = ListenAddress(host: output.broadcaster.bind, port: output.broadcaster.port)
                guard Self.overlap(address, http) else { continue }
                let what = StationConfiguration.describe(output, of: station.name)
                let at = index < placed.addressLines.count ? " (line \(placed.addressLines[index]))" : ""
                problems.add(line, "http = \(http) overlaps \(what) on \(address)\(at): give HTTP its own port")
            }
        }
        if let status = server.status, Self.overlap(http, status) {
            let place = statusLine.map { "line \($0)" } ?? "the default"
            problems.add(line, "http = \(http) overlaps the status address \(status) (\(place))")
        }
    }

    static func address(of station: StationConfiguration) -> ListenAddress {
        ListenAddress(host: station.broadcaster.bind, port: station.broadcaster.port)
    }

    /// Whether binding both would clash. Addresses are compared as bytes, so `::1` and `0:0::1` are one address.
    static func overlap(_ a: ListenAddress, _ b: ListenAddress) -> Bool {
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
