import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Socket activation (in the system layer) in a station's terms.
extension SocketActivation.Assignment {
    /// The sockets of a station's renditions, by rendition name.
    package func renditions(of station: StationConfiguration) -> [String: Int32] {
        var sockets: [String: Int32] = [:]
        for rendition in station.renditions {
            sockets[rendition.name] = stations["\(station.name)/\(rendition.name)"]
        }
        return sockets
    }
}

extension SocketActivation {
    /// What a station listens on: its own port, then each rendition's, named `STATION/NAME` (a socket unit's
    /// `FileDescriptorName=` for a rendition).
    package static func listeners(of station: StationConfiguration) -> [Listener] {
        [Listener(name: station.name, bind: station.broadcaster.bind, port: station.broadcaster.port)]
            + station.renditions.map {
                Listener(name: "\(station.name)/\($0.name)", bind: $0.broadcaster.bind, port: $0.broadcaster.port)
            }
    }
}
