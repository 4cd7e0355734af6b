import Glibc
import RadioRelayNet
import RadioRelaySystem

extension ServerConfiguration {
    /// What start-up logs once and `check-config` prints, of settings that are valid but likely mistakes: `notes`
    /// (a notice: PROXY headers believed from loopback only) and `warnings` (what fails an operator later: a file
    /// input whose file cannot be read, a status endpoint whose controls anyone can reach).
    package var notes: [String] {
        TrustedProxies.notes(
            stations: stations, httpProxyProtocol: server.http != nil && server.httpProxyProtocol,
            httpProxyFrom: server.httpProxyFrom)
    }

    package var warnings: [String] {
        var found: [String] = []
        if let status = server.status, server.statusAccess.token == nil,
            SocketAddress(host: status.host, port: UInt16(clamping: status.port))?.isLoopback != true
        {
            found.append(
                "the status endpoint listens on \(status) with no status_token: anyone who reaches it can force and "
                    + "release inputs and kill live sources (POST /stations/NAME/…, /admin/killsource); set "
                    + "status_token, or status = 127.0.0.1:\(status.port)")
        }
        for station in stations {
            for input in station.inputs where input.isFile {
                let path = Downloader.path(of: input.upstream)
                guard access(path, R_OK) != 0 else { continue }
                let what = station.inputs.count == 1 ? "upstream" : "input \(input.name)"
                found.append(
                    "station \(station.name): \(what) \(path) cannot be read (\(String(cString: strerror(errno)))): it "
                        + "fails when the station needs it")
            }
        }
        return found
    }
}
