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
    /// An output without a raw port (`port = none`) listens on nothing.
    package static func listeners(of station: StationConfiguration) -> [Listener] {
        let outputs = station.outputSettings
        let main = outputs.first.map { $0.broadcaster.rawListeners } ?? true
        return
            (main ? [Listener(name: station.name, bind: station.broadcaster.bind, port: station.broadcaster.port)] : [])
            + station.renditions.compactMap { rendition in
                let listens = outputs.first { $0.name == rendition.name }?.broadcaster.rawListeners ?? true
                guard listens else { return nil }
                return Listener(
                    name: "\(station.name)/\(rendition.name)", bind: rendition.broadcaster.bind,
                    port: rendition.broadcaster.port)
            }
    }
}
