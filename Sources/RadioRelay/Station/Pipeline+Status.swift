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
            if let problem = input.unreadable, input.downloader == nil {
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
            if let source = input.downloader?.source {
                state.source = InputState.Source(
                    address: "\(source.peer)", userAgent: source.request.userAgent, method: source.request.method,
                    since: source.since, bytes: input.bytesIn - input.connection.bytesAtOpen)
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
        // The counters of every input's reading, those of inputs no longer listed included.
        var packets = retired.packets
        var decoded = retired.decoded
        var skipped = retired.skipped
        var errors = retired.errors
        var readers = 0
        for input in inputs {
            if let decoder = input.decoder {
                packets += decoder.parser.statistics.packets
                skipped += decoder.parser.statistics.bytesSkipped
                decoded += decoder.decoded.packets
                errors += decoder.decoded.errors
                readers += decoder.readersMade
            } else {
                skipped += input.demuxer.statistics.bytesSkipped
                errors += input.demuxer.statistics.badPages + input.demuxer.statistics.droppedPackets
            }
        }
        if transcoder != nil {
            state.packets = packets
            state.decodedPackets = decoded
            state.readers = readers
        }
        state.skippedBytes = skipped
        state.decodeErrors = errors + (relay?.statistics.streamErrors ?? 0)
    }

    /// Counts of an input leaving the list (a reload), kept in the station's totals.
    func retire(_ input: StationInput) {
        if let decoder = input.decoder {
            retired.packets += decoder.parser.statistics.packets
            retired.skipped += decoder.parser.statistics.bytesSkipped
            retired.decoded += decoder.decoded.packets
            retired.errors += decoder.decoded.errors
        } else {
            retired.skipped += input.demuxer.statistics.bytesSkipped
            retired.errors += input.demuxer.statistics.badPages + input.demuxer.statistics.droppedPackets
        }
    }
}
