import RadioRelaySystem

/// What the relay chain hands on: audio released, dropped or replaced by silence on the stream clock's word, pages
/// and events, and a new link started when the upstream's stream changes.
extension OpusRelayChain {
    package func release(seconds: Double) throws {
        guard seconds > 0 else { return }
        credit += seconds * Double(OpusClock.rate)
        while queueHead < queue.count {
            switch queue[queueHead] {
            case .link(let headPacket, let comments):
                try startLink(headPacket: headPacket, comments: comments)
            case .streamStart:
                repager.markStreamStart()
            case .packet(let packet, let samples):
                guard credit >= Double(samples) else { return compact() }
                credit -= Double(samples)
                queuedSamples -= samples
                repager.append(packet, samples: samples)
            }
            queueHead += 1
        }
        credit = min(credit, 960)  // nothing waited: what was released was not there (the clock fills silence)
        compact()
    }

    /// Drops the oldest `seconds` of waiting packets (links on the way still take effect).
    package func drop(seconds: Double) throws {
        guard seconds.isFinite, seconds > 0 else { return }
        var left = Int(min(seconds, 86_400) * Double(OpusClock.rate))
        while queueHead < queue.count, left > 0 {
            switch queue[queueHead] {
            case .link(let headPacket, let comments): try startLink(headPacket: headPacket, comments: comments)
            case .streamStart: repager.markStreamStart()
            case .packet(_, let samples):
                left -= samples
                queuedSamples -= samples
            }
            queueHead += 1
        }
        compact()
    }

    /// Relays `frames` samples (48 kHz) of Opus silence, 20 ms packets, the remainder credited to the next call.
    package func encodeSilence(frames: Int) throws {
        silenceCredit += Double(max(0, frames))
        let channels = repager.head.channels
        if channels != silenceChannels {
            silence = try OpusSilence.packet(channels: channels)
            silenceChannels = channels
        }
        while silenceCredit >= 960 {
            silenceCredit -= 960
            repager.append(silence, samples: 960)
        }
    }

    package func takePages() -> [OggPage] { repager.takePages() }

    package func takeEvents() -> [StageChain.Event] {
        guard !events.isEmpty else { return [] }
        defer { events.removeAll() }
        return events
    }

    func startLink(headPacket: [UInt8], comments: [String]) throws {
        statistics.links += 1
        try repager.startLink(serial: .random(in: 1...UInt32.max), headPacket: headPacket, comments: comments)
    }

    func compact() {
        if queueHead > 0 && (queueHead >= queue.count || queueHead > 1024) {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
    }
}
