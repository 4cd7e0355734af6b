import CSystemd
import Glibc

/// Listening sockets passed by systemd (socket activation, `sd_listen_fds_with_names`), and which station each one
/// is for.
///
/// Matching, in order: a socket whose `FileDescriptorName=` is a station's name goes to that station; the others go
/// by the address they are bound to (a station bound to `0.0.0.0` or `::` takes a socket on its port whatever its
/// address); a single socket and a single station go together whatever their addresses (the demo, a one-station
/// config). A socket named `status` (or bound to the status address) is the status endpoint's. What is left over is
/// an error: a unit that passes a socket nobody serves is misconfigured.
package enum SocketActivation {
    /// One passed socket: its descriptor, its `FileDescriptorName=`, and the address it is bound to.
    package struct Passed: Sendable, Equatable {
        package let descriptor: Int32
        package let name: String?
        package let host: String
        package let port: UInt16

        package init(descriptor: Int32, name: String?, host: String, port: UInt16) {
            self.descriptor = descriptor
            self.name = name
            self.host = host
            self.port = port
        }
    }

    /// A station as far as matching cares.
    package struct Listener: Sendable, Equatable {
        package let name: String
        package let bind: String
        package let port: Int

        package init(name: String, bind: String, port: Int) {
            self.name = name
            self.bind = bind
            self.port = port
        }
    }

    package struct Assignment: Sendable, Equatable {
        /// Station name (`STATION/NAME` for a rendition) → descriptor.
        package var stations: [String: Int32] = [:]
        /// The status endpoint's socket, if one was passed.
        package var status: Int32?
        /// The HTTP front end's socket, if one was passed.
        package var http: Int32?

    }

    /// The sockets systemd passed to this process (none when not socket-activated); the environment variables are
    /// unset so that child processes do not take them too.
    package static func passed() throws -> [Passed] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        guard count >= 0 else { throw SystemError("sd_listen_fds_with_names", errno: -count) }
        defer {
            if let names {
                for index in 0..<Int(count) { free(names[index]) }
                free(names)
            }
        }
        var sockets: [Passed] = []
        for index in 0..<Int(count) {
            let descriptor = SD_LISTEN_FDS_START + Int32(index)
            let name = names?[index].map { String(cString: $0) }.flatMap { $0 == "unknown" ? nil : $0 }
            let address = try SocketAddress.local(of: descriptor)
            sockets.append(Passed(descriptor: descriptor, name: name, host: address.host, port: address.port))
        }
        return sockets
    }

    /// Which passed socket serves which station (and the status endpoint); throws `ConfigurationError` naming the
    /// sockets nobody serves.
    package static func assign(
        _ sockets: [Passed], to stations: [Listener], status: (host: String, port: Int)? = nil,
        http: (host: String, port: Int)? = nil
    ) throws(ConfigurationError) -> Assignment {
        var result = Assignment()
        var left = sockets
        // A name that is no station's, `status` or `http` names nothing here: systemd's default name (the socket
        // unit's own, `radio-relay.socket`) is such a name, so it goes by address like an unnamed socket.
        let known = Set(stations.map(\.name) + ["status", "http"])
        func unnamed(_ socket: Passed) -> Bool { socket.name.map { !known.contains($0) } ?? true }
        /// A station's name, or nil and "status" / "http".
        func take(_ index: Int, for station: String?, endpoint: String = "status") {
            if let station {
                result.stations[station] = left[index].descriptor
            } else if endpoint == "http" {
                result.http = left[index].descriptor
            } else {
                result.status = left[index].descriptor
            }
            left.remove(at: index)
        }
        // By name.
        for station in stations {
            if let index = left.firstIndex(where: { $0.name == station.name }) { take(index, for: station.name) }
        }
        if let index = left.firstIndex(where: { $0.name == "status" }) { take(index, for: nil) }
        if let index = left.firstIndex(where: { $0.name == "http" }) { take(index, for: nil, endpoint: "http") }
        // By address.
        func matches(_ socket: Passed, host: String, port: Int) -> Bool {
            guard Int(socket.port) == port else { return false }
            return host == socket.host || host == "0.0.0.0" || host == "::"
        }
        for station in stations where result.stations[station.name] == nil {
            if let index = left.firstIndex(where: {
                unnamed($0) && matches($0, host: station.bind, port: station.port)
            }) {
                take(index, for: station.name)
            }
        }
        if result.status == nil, let status,
            let index = left.firstIndex(where: { unnamed($0) && matches($0, host: status.host, port: status.port) })
        {
            take(index, for: nil)
        }
        if result.http == nil, let http,
            let index = left.firstIndex(where: { unnamed($0) && matches($0, host: http.host, port: http.port) })
        {
            take(index, for: nil, endpoint: "http")
        }
        // One and one.
        if left.count == 1, stations.count == 1, result.stations.isEmpty, unnamed(left[0]) {
            take(0, for: stations[0].name)
        }
        guard left.isEmpty else {
            let names = left.map { "\($0.name.map { "\"\($0)\" " } ?? "")\($0.host):\($0.port) (fd \($0.descriptor))" }
            throw ConfigurationError(
                "socket activation passed \(names.joined(separator: ", ")), which no station serves: name the "
                    + "socket after its station (FileDescriptorName=) or bind it to the station's address and port")
        }
        return result
    }
}
