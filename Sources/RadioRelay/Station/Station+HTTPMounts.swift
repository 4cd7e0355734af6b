import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

extension Station: HTTPMounts {
    /// Every output's mount, with the station's name for people, its title and the output's encoding.
    package var sourceDesk: SourceDesk? { desk }

    package var songHistory: (station: String, history: SongHistory) { (name, history.snapshot) }

    package var adminView: AdminStationView {
        let state = self.state
        var view = AdminStationView(name: name)
        view.inputs = state.inputs.map { input in
            AdminStationView.Input(
                name: input.name, kind: input.kind.rawValue, state: input.state.rawValue, reason: input.reason,
                since: input.since, title: input.title)
        }
        view.playing = state.playingInput
        view.forced = state.forcedInput
        view.takesSources = desk.password != nil
        view.source = state.inputs.lazy.compactMap(\.source).first.map { source in
            AdminStationView.Source(address: source.address, userAgent: source.userAgent, since: source.since)
        }
        view.switches = state.switches.map {
            AdminStationView.Switch(at: $0.at, from: $0.from, to: $0.to, reason: $0.reason)
        }
        return view
    }

    /// What listeners are told: the station's settings, and a live source's `ice-*` where the station sets none.
    var shownInfo: StationInfo {
        var info = configuration.info
        guard let live = desk.liveInfo else { return info }
        info.displayName = info.displayName ?? live.displayName
        info.description = info.description ?? live.description
        info.genre = info.genre ?? live.genre
        info.url = info.url ?? live.url
        return info
    }

    package var httpMounts: [(mount: PublicDirectory.Mount, broadcaster: Broadcaster)] {
        let info = shownInfo
        let state = self.state
        return outputs.map { output in
            let path = "/" + output.mount
            // An MP3 output's bitrate and channels are the upstream's (0 and 2 before it said).
            let mp3 = output.format == .mp3
            var mount = PublicDirectory.Mount(
                path: path, eventsPath: PublicDirectory.eventsPath(forMount: path), station: name,
                rendition: output.name, info: info, title: state.title,
                bitrate: mp3 ? state.format?.bitrate ?? 0 : output.encoder.bitrate,
                channels: mp3 ? state.format?.channels ?? 2 : output.encoder.channels,
                rawAddress: output.broadcaster.listenFD == nil ? "" : output.broadcaster.address.description,
                hls: output.hls)
            mount.format = output.format
            if mp3 { mount.sampleRate = state.format?.sampleRate ?? 44_100 }
            let counters = output.broadcaster.counters
            mount.listeners = counters.listeners.load(ordering: .relaxed)
            mount.listenerPeak = counters.listeners.peak
            mount.streamStart = createdAt
            mount.sourceConnected = sourceDesk?.connectedAt
            mount.dj = desk.onAir?.dj
            let live = state.inputs.first { $0.source != nil }?.source
            mount.admin.sourceAddress = live.map { IcecastStatus.hostName($0.address) }
            mount.admin.sourceAgent = live?.userAgent
            mount.admin.bytesRead = state.inputs.reduce(0) { $0 &+ $1.bytesIn }
            mount.admin.bytesSent = counters.bytesSent.load(ordering: .relaxed)
            mount.admin.maxListeners = configuration.broadcaster.maxListeners
            mount.admin.slowListeners =
                counters.moved.load(ordering: .relaxed) &+ counters.droppedSlow.load(ordering: .relaxed)
            return (mount, output.broadcaster)
        }
    }
}
