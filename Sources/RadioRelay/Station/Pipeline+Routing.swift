import Foundation
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Routing what each input yields: its bytes go to its reading (`InputReading`: decoded or relayed), which hands
/// what the one that plays yields to the chain and keeps and measures its own audio; the pipeline acts on what every
/// input says (its format, title, audio flowing and level), so a hot standby is ready and a silenced input's
/// recovery is heard. A crossfade's outgoing input goes on into the fade (`fadingOut`).
extension Pipeline {
    /// Hands input `index`'s bytes to what reads them; what it finds is routed here.
    func feed(_ index: Int, _ bytes: UnsafeRawBufferPointer) throws {
        let role = ReadingRole(plays: index == selector.playing, meters: selector.settings.deadAir > 0)
        try inputs[index].reading.read(bytes, role) { try observe(index, $0, plays: role.plays) }
        if role.plays { takeEvents() }
    }

    /// A file's pass ended: the reading's tail, routed as its bytes' yield is.
    func endPass(_ index: Int) throws {
        let role = ReadingRole(plays: index == selector.playing, meters: selector.settings.deadAir > 0)
        try inputs[index].reading.endPass(role) { try observe(index, $0, plays: role.plays) }
        if role.plays { takeEvents() }
    }

    /// What input `index` yields: its format and title always; for its audio, the selector hears that it flows
    /// (the input that plays fades in when it is back after an outage) and its level, its own pace advances, and a
    /// crossfade's outgoing input goes on into the fade.
    func observe(_ index: Int, _ observation: InputObservation, plays: Bool) throws {
        let input = inputs[index]
        switch observation {
        case .format(let format):
            input.format = format
        case .title(let title):
            input.ownTitle = title
        case .audio(let audio):
            input.packets += 1  // audio of any codec counts for the no-audio rule
            let now = monotonicNow()
            if !input.flowing {
                input.flowing = true
                selector.flowing(index, now: now)
                // Back before its audio ran out (a late input with a little left), it goes on where it was.
                if plays { chain.fadeIn(minimum: Self.fadeFrames(Self.shortFade, rate: configuration.commonRate)) }
            }
            input.pace.seconds += audio.seconds
            if let quiet = audio.quiet { selector.level(index, quiet: quiet, now: now) }
            if index == fadingOut, let buffer = audio.buffer {
                outgoingAudioAt = now
                chain.acceptOutgoing(buffer)
                if !chain.takesOutgoing { fadingOut = nil }
            }
        }
    }
}
