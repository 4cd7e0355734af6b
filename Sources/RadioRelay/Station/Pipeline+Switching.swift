import Foundation
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Switching between inputs: the selector decides, the pipeline carries it out on the chain — a crossfade (or a
/// short fade-in) on a transcoding station, the new root's head and tags on an edge — and tells the outside: one log
/// line per switch, the title of what plays, status and metrics.
extension Pipeline {
    /// The fade when the old input has no audio left to cross with, and the fade-out of an input that stopped.
    static let shortFade = 0.05

    static func fadeFrames(_ seconds: Double, rate: Int) -> Int {
        PCMBuffer.frames(max(0, seconds), rate: rate)
    }

    /// Lets the selector decide at `now`, and carries out the switch it makes.
    func decide(now: Double) {
        let wasForced = selector.forced
        guard let change = selector.decide(now: now) else {
            if wasForced != nil && selector.forced == nil, let index = wasForced {
                Log.notice(
                    "\(configuration.name): the force of input \(inputs[index].name) ends: it failed, and the rules "
                        + "choose again")
            }
            return
        }
        carryOut(change, now: now)
    }

    func carryOut(_ change: InputSelector.Switch, now: Double) {
        let from = inputs[change.from]
        let to = inputs[change.to]
        var detail: String?
        switch change.reason {
        case .failed, .handBack:
            if case .retrying(let reason) = from.activity { detail = reason }
            if case .waiting(let reason) = from.activity { detail = reason }
        case .deadAir:
            detail =
                "below \(Int(configuration.failover.deadAirLevel)) dBFS for "
                + "\(String(format: "%g", configuration.failover.deadAir)) s"
        default: break
        }
        // The old input's waiting tail fades out, the new one's audio fades in over it (a transcoding station's; an
        // edge hands the new root's head and tags over, as a reconnect does). An old input that still delivers (a
        // switch up, a force, dead air) goes on fading out with its next audio for the whole crossfade: the station
        // runs at its lead, so little of it waits.
        let continues = from.downloader != nil && from.flowing && selector.inputs[change.from].failure == nil
        let waiting = PCMBuffer.frames(chain.queuedSeconds, rate: configuration.commonRate)
        // Of the new one's newest kept audio (a hot standby's), only as much as the fade needs: the rest is older
        // than the clock wants. With the old input going on, the new one's next audio comes as the old one's does:
        // as much as waits, and 20 ms more. A live source is not an upstream to catch up with: all it sent so far
        // plays (at most a second).
        let fade = Self.fadeFrames(
            max(configuration.failover.crossfade, Self.shortFade), rate: configuration.commonRate)
        var handover = InputHandover()
        handover.crossfade = Self.fadeFrames(configuration.failover.crossfade, rate: configuration.commonRate)
        handover.minimum = Self.fadeFrames(Self.shortFade, rate: configuration.commonRate)
        handover.outgoingContinues = continues
        handover.keptFrames =
            to.live != nil
            ? nil : continues ? min(fade, waiting) + Self.fadeFrames(0.02, rate: configuration.commonRate) : fade
        handover.format = to.format
        handover.stationFormat = local.format
        if change.from == liveIndex { showHandsBack() }
        if change.to == liveIndex { showBegins(change.to) }
        outgoingAudioAt = now
        do {
            try to.reading.takeOver(handover)
        } catch {
            Log.error("\(configuration.name): switching to input \(to.name): \(error)")
        }
        fadingOut = continues && chain.takesOutgoing ? change.from : nil
        takeEvents()
        // The input left keeps its own pace from here if it is paced and goes on being read.
        from.pace = (now, 0)
        from.reading.forgetKeptAudio()
        clock.connected()
        if let title = to.title { offer(title) }
        let record = InputSwitch(
            at: wallClockNow(), from: from.name, to: to.name, reason: change.reason.rawValue, detail: detail)
        local.switches.append(record)
        if local.switches.count > StationState.switchHistory { local.switches.removeFirst() }
        local.switchCounts[change.reason.rawValue, default: 0] += 1
        Log.notice(
            "\(configuration.name): input \(to.name) plays now (\(to.configuration.shown)), after input \(from.name): "
                + change.reason.rawValue + (detail.map { ": \($0)" } ?? ""))
        publishState()
    }

    // MARK: Operators

    /// Carries out the operators' commands (`Station.submit`), in order, and answers each.
    func takeCommands(now: Double) {
        for ticket in station.commands.take() { ticket.answer(carryOut(ticket.command, now: now)) }
    }

    func carryOut(_ command: StationCommand, now: Double) -> CommandOutcome {
        let station = configuration.name
        switch command {
        case .force(let name):
            guard let index = inputs.firstIndex(where: { $0.name == name }), selector.force(index) else {
                return .refused("station \(station) has no input \(Sanitized.text(name, limit: 64))")
            }
            Log.notice("\(station): input \(name) forced by an operator")
            return .done(
                "station \(station): input \(name) forced: it plays once it is healthy, until released or until it fails"
            )
        case .release:
            if let index = selector.forced {
                _ = selector.force(nil)
                Log.notice("\(station): the force of input \(inputs[index].name) released by an operator")
            }
            return .done("station \(station): the force is released: the rules choose the input again")
        case .killSource:
            guard let index = liveIndex, inputs[index].downloader != nil, inputs[index].live?.ending == nil else {
                return .refused("station \(station): no live source is on the air")
            }
            endLive(index, reason: "ended by /admin/killsource", now: now)
            return .done("station \(station): the live source is ended: the station hands back")
        case .moveListeners:
            return .refused("station \(station): listeners are moved by the network loops, not the station")
        }
    }
}
