import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

extension Station: HTTPMounts {
    /// Every output's mount, with the station's name for people, its title and the output's encoding.
    package var httpMounts: [(mount: PublicDirectory.Mount, broadcaster: Broadcaster)] {
        let info = configuration.info
        let title = state.title
        return outputs.map { output in
            let path = "/" + output.mount
            let mount = PublicDirectory.Mount(
                path: path, eventsPath: PublicDirectory.eventsPath(forMount: path), station: name,
                rendition: output.name, info: info, title: title, bitrate: output.encoder.bitrate,
                channels: output.encoder.channels, rawAddress: output.broadcaster.address.description,
                hls: output.hls)
            return (mount, output.broadcaster)
        }
    }
}
