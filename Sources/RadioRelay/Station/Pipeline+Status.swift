import Foundation
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What the pipeline shows of its inputs: each one's state, the one that plays, the force.
extension Pipeline {
    /// Each input's state, the one that plays and the force, into `state`.
    func reportInputs(into state: inout StationState) {
        let now = monotonicNow()
        state.inputs = inputs.enumerated().map { index, input in
            let dead = !selector.isHealthy(index, now: now) && selector.inputs[index].isDead
            var shown: InputState.Phase
            var reason: String?
            var connected = false
            switch input.activity {
            case .idle:
                shown = .standby
            case .connecting:
                shown = .connecting
            case .connected:
                connected = true
                shown = index == selector.playing ? .playing : .standby
            case .retrying(let why):
                shown = .retrying
                reason = why
            case .waiting(let why):
                shown = .waiting
                reason = why.map { "no live source connected (the last one \($0))" } ?? "no live source connected"
            }
            if let problem = input.file?.unreadable, input.downloader == nil {
                shown = .failed
                reason = problem
            }
            if dead {
                shown = index == selector.playing ? .playing : .failed
                reason =
                    "dead air: below \(Int(configuration.failover.deadAirLevel)) dBFS for "
                    + "\(String(format: "%g", configuration.failover.deadAir)) s"
            }
            var state = InputState(
                name: input.name, kind: input.configuration.kind, url: input.configuration.shown, state: shown,
                reason: reason, since: input.since, connected: connected, title: input.title, bytesIn: input.bytesIn,
                reconnects: input.reconnects)
            state.format = input.format?.description
            if let stage = (input.reading as? DecodedInput)?.loudness {
                state.loudness = InputState.Loudness(lufs: stage.loudness, gain: stage.gain.gain)
            }
            if let source = input.downloader?.source {
                state.source = InputState.Source(
                    address: "\(source.peer)", userAgent: source.request.userAgent, method: source.request.method,
                    since: source.since, bytes: input.bytesIn - input.connection.bytesAtOpen, dj: source.user.dj)
            }
            return state
        }
        state.playingInput = playing.name
        state.forcedInput = selector.forced.map { inputs[$0].name }
        switch playing.activity {
        case .connected: state.upstream = .connected
        case .retrying(let reason): state.upstream = .retrying(reason: reason)
        case .idle, .connecting: state.upstream = .connecting
        case .waiting: state.upstream = .retrying(reason: "waiting for a live source")
        }
        // The counters of every input's reading, those of inputs no longer listed included (the chain adds its own:
        // `PipelineChain.report`).
        let counters = inputs.reduce(retired) { $0 + $1.reading.counters }
        state.packets = counters.packets
        state.decodedPackets = counters.decoded
        state.readers = counters.readers
        state.skippedBytes = counters.skippedBytes
        state.decodeErrors = counters.errors
    }

    /// Counts of an input leaving the list (a reload), kept in the station's totals.
    func retire(_ input: StationInput) {
        retired = retired + input.reading.counters
    }
}
