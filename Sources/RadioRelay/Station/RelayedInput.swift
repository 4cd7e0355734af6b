import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// An edge's input, another relay's Ogg Opus relayed without decoding: its `OggDemuxer`, and the root's newest head
/// and tags, which the station's `OpusRelayChain` gets when a switch makes it play (as a reconnect does: a new link
/// only if the head cannot carry on the same one). What it demuxes goes to the chain while it plays. A root whose
/// stream cannot be relayed (more than two channels) fails at its head.
final class RelayedInput: InputReading {
    var demuxer = OggDemuxer()
    let chain: OpusRelayChain
    /// The root's URL, for its errors.
    let upstream: String
    private(set) var head: (serial: UInt32, head: OpusPacketInfo.Head)?
    private(set) var tags: (serial: UInt32, comments: [String])?

    init(_ configuration: InputConfiguration, chain: OpusRelayChain) {
        self.chain = chain
        upstream = configuration.upstream
    }

    func read(
        _ bytes: UnsafeRawBufferPointer, _ role: ReadingRole, observe: (InputObservation) throws -> Void
    ) throws {
        var demuxer = self.demuxer
        defer { self.demuxer = demuxer }
        try demuxer.demux(bytes) { try route($0, role, observe) }
    }

    private func route(
        _ event: OggDemuxer.Event, _ role: ReadingRole, _ observe: (InputObservation) throws -> Void
    ) throws {
        switch event {
        case .head(let serial, let head):
            guard head.mappingFamily == 0, head.channels <= 2 else {
                throw DownloadError(
                    .transfer, url: upstream,
                    "the upstream's Opus stream has \(head.channels) channels (channel mapping family "
                        + "\(head.mappingFamily)): an edge relays mono and stereo streams (family 0) only")
            }
            self.head = (serial, head)
            tags = nil
        case .tags(let serial, let comments):
            tags = (serial, comments)
            if let title = OpusPacketInfo.title(in: comments) {
                try observe(.title(Sanitized.text(title, limit: Sanitized.titleLimit)))
            }
        case .audio:
            try observe(.audio(InputAudio()))
        }
        if role.plays { chain.accept(event) }
    }

    /// Nothing is held between passes: an Ogg page goes on whole.
    func endPass(_ role: ReadingRole, observe: (InputObservation) throws -> Void) {}

    func restart(metaInterval: Int?) {
        demuxer.reset()
    }

    func takeOver(_ handover: InputHandover) {
        if let head { chain.accept(.head(serial: head.serial, head.head)) }
        if let tags { chain.accept(.tags(serial: tags.serial, comments: tags.comments)) }
    }

    /// An edge takes no live source.
    func announce(title: String, plays: Bool) {}

    /// Packets are not kept: a switch hands over the head and tags, and the next packets follow.
    func forgetKeptAudio() {}

    func reconfigure(_ station: StationConfiguration) {}

    var expectedAudio: String { "Opus audio" }

    var counters: ReadingCounters {
        ReadingCounters(
            skippedBytes: demuxer.statistics.bytesSkipped,
            errors: demuxer.statistics.badPages + demuxer.statistics.droppedPackets)
    }
}

@available(*, unavailable) extension RelayedInput: Sendable {}
