import RadioRelaySystem

/// Relayed Opus packets → the station's own Ogg stream: its own serial, continuous page sequence and granules,
/// pages flushed every `pageDuration`, whatever the upstream's paging, serials and reconnects were. A new link
/// (`startLink`) ends the current logical stream (its last packet flagged end-of-stream) and begins another with a
/// fresh serial and the given OpusHead and OpusTags, as the Encoder does for titles.
///
/// Every page carries its place on the stream-wide timeline (`OggPage.timeline`) and header pages are marked, so
/// the page ring and the listener schedule treat relayed pages exactly like encoded ones.
package final class OpusRepager {
    package let pageSamples: Int
    private var ogg: OggStream
    package private(set) var head: OpusPacketInfo.Head
    /// The current link's header pages (OpusHead, OpusTags).
    package private(set) var headerPages: [OggPage] = []
    /// Samples in the current link so far (its granule position, less pre-skip accounting: see `append`).
    private var linkSamples: Int64 = 0
    /// Samples before the current link (the timeline's origin for it).
    private var origin: Int64 = 0
    private var samplesInPage = 0
    /// The last packet appended, held back one packet so that a link's last packet can be flagged end-of-stream.
    private var held: (packet: [UInt8], samples: Int)?
    private var pages: [OggPage] = []
    /// The next page completed starts another upstream stream's packets (`markStreamStart`); or it will once the
    /// held packet, the old stream's last, is written.
    private var marksNextPage = false
    private var marksAfterHeld = false
    package private(set) var linksStarted = 0
    /// Samples relayed (silence included): the stream's clock.
    package private(set) var samplesOut: Int64 = 0

    /// - Parameter headPacket: the first link's OpusHead packet (a station that has not heard its upstream yet
    ///   starts with a default stereo one); `comments`: its OpusTags' comments.
    package init(serial: UInt32, pageDuration: Int, headPacket: [UInt8], comments: [String]) throws {
        guard let head = OpusPacketInfo.head(headPacket) else { throw ConfigurationError("not an OpusHead packet") }
        self.head = head
        pageSamples = max(960, pageDuration * 48)
        ogg = try OggStream(serial: serial)
        writeHeaders(headPacket, comments: comments, publish: false)
    }

    /// OpusHead for `channels` (1 or 2), mapping family 0, the given pre-skip: the stream a relay starts with
    /// before its upstream says otherwise.
    package static func defaultHead(channels: Int = 2, preSkip: Int = 312) -> [UInt8] {
        var head = Encoder.opusHead(preSkip: preSkip, originalRate: OpusClock.rate)
        head[9] = UInt8(clamping: channels)
        return head
    }

    /// Appends one packet of `samples` (48 kHz) samples; a page is completed every `pageDuration`.
    package func append(_ packet: [UInt8], samples: Int) {
        if let held { write(held.packet, samples: held.samples, end: false) }
        if marksAfterHeld {
            marksAfterHeld = false
            flush()
            marksNextPage = true
        }
        held = (packet, samples)
    }

    /// Ends the current link after the packets appended so far and starts a new one with these headers.
    package func startLink(serial: UInt32, headPacket: [UInt8], comments: [String]) throws {
        guard let newHead = OpusPacketInfo.head(headPacket) else { return }
        if let held {
            write(held.packet, samples: held.samples, end: true)
            self.held = nil
        }
        flush()
        marksAfterHeld = false  // the new link starts afresh anyway
        marksNextPage = false
        origin += linkSamples
        linkSamples = 0
        ogg = try OggStream(serial: serial)
        head = newHead
        linksStarted += 1
        writeHeaders(headPacket, comments: comments, publish: true)
    }

    /// The packets appended from now on are another upstream stream's, carried on in the same link: the page ends
    /// here, and the next page is marked (`OggPage.startsUpstreamStream`), so an HLS stream can start a new segment
    /// after a discontinuity there, its players' decoders starting afresh.
    package func markStreamStart() {
        guard held == nil else {
            marksAfterHeld = true  // it may still end the link (end-of-stream): written with the next packet
            return
        }
        flush()
        marksNextPage = true
    }

    /// The pages completed since the last call.
    package func takePages() -> [OggPage] {
        guard !pages.isEmpty else { return [] }
        defer { pages.removeAll(keepingCapacity: true) }
        return pages
    }

    private func write(_ packet: [UInt8], samples: Int, end: Bool) {
        linkSamples += Int64(samples)
        samplesOut += Int64(samples)
        // Granules count decodable samples including pre-skip (RFC 7845 §4): the link's packets from its start.
        ogg.append(packet, granule: linkSamples, end: end)
        samplesInPage += samples
        if samplesInPage >= pageSamples { flush() }
    }

    private func flush() {
        samplesInPage = 0
        for var page in ogg.flush() {
            page.timeline = origin + max(0, page.granulePosition)
            page.startsUpstreamStream = marksNextPage
            marksNextPage = false
            pages.append(page)
        }
    }

    /// The link's header pages; `publish`: also in the live sequence (a new link: listeners already connected get
    /// them there; the first link's are only the ring's headers).
    private func writeHeaders(_ headPacket: [UInt8], comments: [String], publish: Bool) {
        var headers: [OggPage] = []
        ogg.append(headPacket, granule: 0, beginning: true)
        headers += ogg.flush()
        ogg.append(Encoder.opusTags(vendor: Encoder.vendor, comments: comments), granule: 0)
        headers += ogg.flush()
        for index in headers.indices {
            headers[index].isHeader = true
            headers[index].timeline = origin
        }
        headerPages = headers
        if publish { pages += headers }
    }
}

@available(*, unavailable) extension OpusRepager: Sendable {}
