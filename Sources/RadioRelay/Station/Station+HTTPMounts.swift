import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

extension Station: HTTPMounts {
    /// Every output's mount, with the station's name for people, its title and the output's encoding.
    package var httpMounts: [(mount: PublicDirectory.Mount, broadcaster: Broadcaster)] {
        let info = configuration.info
        let title = state.title
        return outputs.map { output in
            let path = "/" + output.mount
            var mount = PublicDirectory.Mount(
                path: path, eventsPath: PublicDirectory.eventsPath(forMount: path), station: name,
                rendition: output.name, info: info, title: title, bitrate: output.encoder.bitrate,
                channels: output.encoder.channels, rawAddress: output.broadcaster.address.description,
                hls: output.hls)
            let counters = output.broadcaster.counters
            mount.listeners = counters.listeners.load(ordering: .relaxed)
            mount.listenerPeak = counters.listeners.peak
            mount.streamStart = createdAt
            return (mount, output.broadcaster)
        }
    }
}
