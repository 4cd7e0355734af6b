import Foundation
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Routing what each input yields: its bytes to its decoder (MP3) or demuxer (Ogg Opus); the decoded audio, frames
/// and titles of the one that plays to the chain, and every input's own kept audio, level meter, format and title
/// (so a hot standby is ready and a silenced input's recovery is heard). A crossfade's outgoing input goes on into
/// the fade (`fadingOut`).
extension Pipeline {
    /// Hands input `index`'s bytes to what reads them, and what comes out to where it goes.
    func feed(_ index: Int, _ bytes: UnsafeRawBufferPointer) throws {
        let input = inputs[index]
        if let decoder = input.decoder {
            try decoder.feed(bytes) { try route(index, $0) }
            if index == selector.playing { takeEvents() }
        } else {
            var demuxer = input.demuxer
            defer { input.demuxer = demuxer }
            try demuxer.demux(bytes) { try route(index, $0) }
        }
    }

    /// What an MP3 input's decoder yields: the chain's when it plays; its title, format and kept audio always.
    func route(_ index: Int, _ output: InputDecoder.Output) throws {
        let input = inputs[index]
        let plays = index == selector.playing
        switch output {
        case .format(let format):
            input.format = format
            // An Ogg Opus source has no MP3 frames: the pass-through output sounds silent while it plays.
            if plays { transcoder?.inputHasFrames = format.codec == .mpeg }
        case .metadata(let fields):
            if let title = Sanitized.title(in: fields) { input.ownTitle = title }
        case .frame:
            break
        case .pcm(let buffer):
            input.packets += 1  // audio of any codec counts for the no-audio rule
            let now = monotonicNow()
            if !input.flowing {
                input.flowing = true
                selector.flowing(index, now: now)
                // The input that plays is back after an outage (its silence filled in): it fades in. Back before
                // its audio ran out (a late input with a little left), it goes on where it was.
                if plays, transcoder?.heldSeconds == 0 {
                    transcoder?.beginSwitch(
                        crossfade: 0, minimum: Self.fadeFrames(Self.shortFade, rate: configuration.commonRate))
                }
            }
            input.pace.seconds += Double(buffer.frameCount) / Double(max(1, buffer.sampleRate))
            if selector.settings.deadAir > 0 {
                let reading = input.meter.feed(buffer)
                if reading.windows > 0 { selector.level(index, quiet: reading.lastQuiet, now: now) }
            }
            if !plays { input.keep(buffer) }
            if index == fadingOut, let transcoder {
                outgoingAudioAt = now
                transcoder.acceptOutgoing(buffer)
                if !transcoder.takesOutgoing { fadingOut = nil }
            }
        }
        if plays { try transcoder?.accept(output) }
    }

    /// What an Ogg Opus root's demuxer finds: the relay chain's when it plays; its head, tags and title always. A
    /// root whose stream cannot be relayed (multichannel) fails.
    func route(_ index: Int, _ event: OggDemuxer.Event) throws {
        let input = inputs[index]
        switch event {
        case .head(let serial, let head):
            guard head.mappingFamily == 0, head.channels <= 2 else {
                throw DownloadError(
                    .transfer, url: input.configuration.upstream,
                    "the upstream's Opus stream has \(head.channels) channels (channel mapping family "
                        + "\(head.mappingFamily)): an edge relays mono and stereo streams (family 0) only")
            }
            input.head = (serial, head)
            input.tags = nil
        case .tags(let serial, let comments):
            input.tags = (serial, comments)
            if let title = OpusPacketInfo.title(in: comments) {
                input.ownTitle = Sanitized.text(title, limit: Sanitized.titleLimit)
            }
        case .audio:
            input.packets += 1
            if !input.flowing {
                input.flowing = true
                selector.flowing(index, now: monotonicNow())
            }
        }
        guard index == selector.playing, let relay else { return }
        relay.accept(event)
        takeEvents()
    }
}
