import RadioRelaySystem

/// An edge relay's chain: another relay's (or an Icecast Ogg mount's) Ogg Opus bytes → its packets → the station's
/// own Ogg stream, without decoding or re-encoding. The Pipeline drives it like the transcoding `StageChain`:
/// bytes in, `release` what the stream clock says is due, silence when the upstream is away, pages out.
///
/// Across reconnects the listeners see one logical stream: a reconnect to the same upstream stream (same serial)
/// skips the packets already relayed, by granule position, so the upstream's burst is not played twice; an
/// upstream that restarted (a new serial) simply goes on, unless its OpusHead cannot carry on in the same link (a
/// new channel count or mapping), which starts a new chained link. Titles from the upstream's OpusTags (`TITLE=`)
/// become metadata events, and with `chainTitles` new links of the station's own.
///
/// Mono and stereo (channel mapping family 0) only: a multichannel upstream (family 1 or 255) is refused at its
/// OpusHead (`takeRefusal`: the pipeline drops the connection with a clear error and retries), and none of its
/// packets is relayed — the station's own silence, stereo Opus, would be a packet its listeners' multistream
/// decoder cannot read.
package final class OpusRelayChain {
    package struct Settings: Sendable {
        package var pageDuration = 100
        package var chainTitles = false
        package var serial: UInt32 = .random(in: 1...UInt32.max)

        package init() {}
    }

    /// What waits for the clock, in order.
    enum Entry {
        case packet([UInt8], samples: Int)
        /// A new link of the station's own, taking effect at this point of the audio.
        case link(headPacket: [UInt8], comments: [String])
        /// The packets from here on are another upstream stream's (a new serial the link carries on): the page
        /// ends here, and the next one says so (`OggPage.startsUpstreamStream`, an HLS discontinuity).
        case streamStart
    }

    package struct Statistics: Equatable, Sendable {
        /// Audio packets taken from the upstream (skipped ones excluded).
        package var packets = 0
        /// Packets skipped on a reconnect because they were relayed already.
        package var skipped = 0
        /// New links started (the upstream's head changed, or titles with `chainTitles`).
        package var links = 0
        /// Values from the upstream that make no sense (a granule that overflows, goes backwards or jumps by more
        /// than a day; a packet larger than its duration allows): each counted, the packet or the granule dropped,
        /// and the timeline taken up again from the next page that says where it is.
        package var streamErrors = 0
        /// Link changes the upstream asked for faster than `minLinkSeconds` apart: a held one is replaced by the
        /// newer (the newest wins), and the packets its head cannot carry are dropped meanwhile.
        package var linksHeld = 0
    }

    /// The shortest a link of the station's own lasts: new heads and new titles (`chainTitles`) faster than this
    /// wait, the newest replacing the one waiting, so a flood of them costs one link (two header pages to every
    /// listener) and one log line a second, not one each.
    package static let minLinkSeconds = 1.0

    /// The largest forward jump of the upstream's granule position that is still one stream going on: a day.
    package static let maxGranuleJump = Int64(OpusClock.rate) * 86_400

    package let settings: Settings
    /// With it, each new upstream title also starts a link of the station's own (`chain_titles`).
    package var chainsTitles: Bool
    var demuxer = OggDemuxer()
    let repager: OpusRepager
    var queue: [Entry] = []
    var queueHead = 0
    var queuedSamples = 0
    /// Samples the clock released but no packet has used yet (a packet goes out whole).
    var credit = 0.0
    var silenceCredit = 0.0
    var silence: [UInt8]
    var silenceChannels: Int
    var events: [StageChain.Event] = []
    /// The upstream stream last followed, the end granule of its last packet queued, and whether packets are being
    /// skipped (a reconnect to it).
    var upstreamSerial: UInt32?
    var upstreamGranule: Int64?
    var skipping = false
    /// The head and title of the link the queue ends in.
    var queuedHead: OpusPacketInfo.Head
    var queuedHeadPacket: [UInt8]
    var title: String?
    /// When the last link was queued (the clock's seconds), and the link waiting for its turn.
    var lastLinkAt: Double?
    var heldLink: (headPacket: [UInt8], head: OpusPacketInfo.Head)?
    /// The upstream's head the queued link cannot carry while a head change is held: its packets are dropped.
    var mismatched = false
    var linkLog = LogRateLimit<Int>(limit: 1, window: 1)
    /// The serial of a multichannel stream refused, and the reason not yet taken by the pipeline.
    var refusedSerial: UInt32?
    var refusal: String?
    package internal(set) var statistics = Statistics()
    /// Stream errors are logged at most once a second, with the count of those left out.
    var errorLog = LogRateLimit<Int>(limit: 1, window: 1)
    let clock: () -> Double

    package init(_ settings: Settings, clock: @escaping () -> Double = monotonicNow) throws {
        self.settings = settings
        self.clock = clock
        chainsTitles = settings.chainTitles
        queuedHeadPacket = OpusRepager.defaultHead()
        guard let head = OpusPacketInfo.head(queuedHeadPacket) else { throw ConfigurationError("default OpusHead") }
        queuedHead = head
        repager = try OpusRepager(
            serial: settings.serial, pageDuration: settings.pageDuration, headPacket: queuedHeadPacket, comments: [])
        silenceChannels = head.channels
        silence = try OpusSilence.packet(channels: head.channels)
    }

    /// The first link's header pages (for the ring before anything is published).
    package var headerPages: [OggPage] { repager.headerPages }
    package var queuedSeconds: Double { Double(queuedSamples) / Double(OpusClock.rate) }
    package var secondsEncoded: Double { OpusClock.seconds(repager.samplesOut) }
    package var samplesEncoded: Int64 { repager.samplesOut }
    package var demuxStatistics: OggDemuxer.Statistics { demuxer.statistics }

    /// A new connection: it starts with its header pages.
    package func restart() {
        demuxer.reset()
        refusedSerial = nil
        refusal = nil
    }

    /// Why the upstream's stream is not relayed (a multichannel one), once.
    package func takeRefusal() -> String? {
        defer { refusal = nil }
        return refusal
    }

    package func feed(_ bytes: UnsafeRawBufferPointer) throws {
        demuxer.demux(bytes) { event in accept(event) }
    }

    /// Takes what a demuxer found: its own (`feed`), or an input's (an edge with several roots demuxes each with an
    /// `OggDemuxer` of its own and hands the chain what the one that plays sends; a switch starts with that root's
    /// head and tags, as a reconnect does).
    package func accept(_ event: OggDemuxer.Event) {
        switch event {
        case .head(let serial, let head):
            guard head.mappingFamily == 0, head.channels <= 2 else {
                if refusedSerial != serial {
                    refusal =
                        "the upstream's Opus stream has \(head.channels) channels (channel mapping family "
                        + "\(head.mappingFamily)): an edge relays mono and stereo streams (family 0) only"
                }
                refusedSerial = serial
                return
            }
            refusedSerial = nil
            if serial == upstreamSerial {
                skipping = upstreamGranule != nil  // the same stream again: what was relayed is skipped
                return
            }
            upstreamSerial = serial
            upstreamGranule = nil
            skipping = false
            if head.carriesPackets(of: queuedHead) {
                queue.append(.streamStart)
                if mismatched {
                    heldLink = nil  // the newest head fits the link in force: no new head waits
                    mismatched = false
                }
            } else {
                logOncePerSecond(
                    &linkLog, .notice,
                    "relay: the upstream's stream now has \(head.channels) channel(s), mapping family "
                        + "\(head.mappingFamily): a new link", more: "changes since the last line")
                requestLink(headPacket: Self.headPacket(for: head), head: head)
            }
        case .tags(let serial, _) where serial == refusedSerial:
            return
        case .audio(let serial, _, _) where serial == refusedSerial:
            return
        case .tags(_, let comments):
            let newTitle = OpusPacketInfo.title(in: comments).map { Sanitized.text($0, limit: Sanitized.titleLimit) }
            guard let newTitle, newTitle != title else { return }
            title = newTitle
            events.append(.metadata(["StreamTitle": newTitle]))
            // A link needs audio before it to end: a title before any (the first connection's tags) only names
            // the later links, as the transcoding path's first link has no title either.
            if chainsTitles && statistics.packets > 0 {
                requestLink(headPacket: heldLink?.headPacket ?? queuedHeadPacket, head: heldLink?.head ?? queuedHead)
            }
        case .audio(_, let packet, let endGranule):
            guard let samples = OpusPacketInfo.samples(packet) else { return }
            queueHeldLinkIfDue()
            if mismatched {
                statistics.linksHeld += 1
                return  // its head waits for its link: the queued one cannot carry it
            }
            guard OpusPacketInfo.sizeFits(packet, streams: queuedHead.streams) else {
                return streamError("a packet of \(packet.count) bytes claims only \(samples) samples")
            }
            if skipping, let end = endGranule, let last = upstreamGranule, end <= last {
                statistics.skipped += 1
                return
            }
            skipping = false
            upstreamGranule = followGranule(endGranule, samples: samples)
            statistics.packets += 1
            queue.append(.packet(packet, samples: samples))
            queuedSamples += samples
        }
    }

    /// A new link, now if the last one is at least `minLinkSeconds` old, else held until then (checked at each
    /// packet) — a later request replacing it.
    private func requestLink(headPacket: [UInt8], head: OpusPacketInfo.Head) {
        heldLink = (headPacket, head)
        mismatched = !head.carriesPackets(of: queuedHead)
        queueHeldLinkIfDue()
        if heldLink != nil { statistics.linksHeld += 1 }
    }

    private func queueHeldLinkIfDue() {
        guard let held = heldLink else { return }
        let now = clock()
        if let last = lastLinkAt, now - last < Self.minLinkSeconds { return }
        heldLink = nil
        mismatched = false
        lastLinkAt = now
        queueLink(headPacket: held.headPacket, head: held.head, comments: titleComments)
    }

    /// The upstream's granule after a packet of `samples` ending at `end` (nil: the page did not say): checked,
    /// since it comes from the wire. One that overflows, goes backwards or leaps more than `maxGranuleJump` is a
    /// stream error; the timeline is then taken up again from the page's own granule, or from the next that has one.
    private func followGranule(_ end: Int64?, samples: Int) -> Int64? {
        guard let last = upstreamGranule else { return end }
        guard let end else {
            let (next, overflow) = last.addingReportingOverflow(Int64(samples))
            if overflow { streamError("the granule position overflows after \(last)") }
            return overflow ? nil : next
        }
        let (step, overflow) = end.subtractingReportingOverflow(last)
        if overflow || step <= 0 || step > Self.maxGranuleJump {
            streamError("the granule position goes from \(last) to \(end)")
        }
        return end
    }

    private func streamError(_ what: String) {
        statistics.streamErrors += 1
        logOncePerSecond(
            &errorLog, .warning, "relay: \(what): a stream error, resynchronised", more: "since the last line")
    }

    /// Writes `line` at most once a second through `limit`, saying how many were left out since.
    private func logOncePerSecond(
        _ limit: inout LogRateLimit<Int>, _ priority: Log.Priority, _ line: String, more: String
    ) {
        switch limit.admit(0, now: clock()) {
        case .write: Log.write(priority, line)
        case .writeAfter(let suppressed): Log.write(priority, line + " (and \(suppressed) more \(more))")
        case .suppress: break
        }
    }

    var titleComments: [String] { title.map { ["TITLE=\($0)"] } ?? [] }

    private func queueLink(headPacket: [UInt8], head: OpusPacketInfo.Head, comments: [String]) {
        if queueHead < queue.count, case .link = queue[queue.count - 1] {
            queue.removeLast()  // a link with no audio yet: the new one replaces it
        }
        queue.append(.link(headPacket: headPacket, comments: comments))
        queuedHead = head
        queuedHeadPacket = headPacket
    }

    /// An OpusHead for `head`'s channels and mapping (pre-skip and rate kept).
    package static func headPacket(for head: OpusPacketInfo.Head) -> [UInt8] {
        var packet = OpusRepager.defaultHead(channels: head.channels, preSkip: head.preSkip)
        packet[18] = UInt8(clamping: head.mappingFamily)
        packet += head.mapping
        return packet
    }

    /// Sends the oldest `seconds` of waiting packets on (whole packets: the rest is credited to the next call).
}

@available(*, unavailable) extension OpusRelayChain: Sendable {}
