import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Moving listeners from one output to another (`moveclients`) on the loop that serves them: both outputs have a
/// share on every pool loop, so a listener changes tables, never threads, and its socket stays where it is. It goes
/// on where it was: as far behind the destination's live edge as it was behind its own, at a clean page, after the
/// rest of the page it was being sent; an Ogg listener in its own stream (`OggSplice`), an MP3 listener with the
/// destination's frames and, if it asked for them, its titles.
///
/// The destination's rules decide as for a listener that arrives: its access list, its places (`max_listeners`,
/// `max_per_ip`); a station that authenticates its listeners takes none by a move (they connect there with their
/// credentials); a raw listener needs a raw port there, and the formats must be the same. A listener that cannot
/// move stays where it is, and the reason is counted in the answer. A moved listener keeps its ID, its connection
/// time and its bytes; the access log gets a line for each mount it listened on (the listening report counts them
/// as one session).
extension NetworkLoop {
    /// Moves this output's listeners on this loop (all, or the one with `id`) to `destination`, this loop's share of
    /// the other output.
    func move(to destination: NetworkLoop, id: ListenerID?, tally: MoveTally) {
        freshen()
        destination.freshen()
        let chosen = id.map { id in active.filter { $0.entry.id == id } } ?? active
        let now = monotonicNow()
        for listener in chosen {
            if let reason = destination.refusal(of: listener, from: self) {
                tally.stayed(reason)
                continue
            }
            guard let place = place(of: listener, in: destination) else {
                tally.stayed("behind the ring (its place in the stream is gone)")
                continue
            }
            if let reason = destination.takePlaces(for: listener) {
                tally.stayed(reason)
                continue
            }
            guard handOver(listener, to: destination, at: place, now: now) else {
                destination.releaseStationPlaces(listener.hostKey)
                tally.stayed("gone meanwhile")
                continue
            }
            tally.moved()
        }
    }

    /// Why the listener cannot come here from `source`, or nil.
    private func refusal(of listener: Listener, from source: NetworkLoop) -> String? {
        if source.ring.headers.isEmpty != ring.headers.isEmpty { return "the destination is in another format" }
        if listener.kind == .tcp && broadcaster.listenFD == nil {
            return "raw TCP listeners, the destination has no raw port"
        }
        let policy = broadcaster.admission.policy
        if broadcaster.station != source.broadcaster.station, policy.authentication[broadcaster.station]?.isOn == true {
            return "the destination authenticates its listeners"
        }
        if let client = SocketAddress(host: listener.entry.address, port: listener.port) {
            let ask = AdmissionAsk(
                station: broadcaster.station, mount: broadcaster.mount, kind: listener.kind, client: client,
                request: listener.request)
            if let (decision, _) = policy.screen(ask) { return "refused by the destination: \(decision.reason)" }
        }
        return nil
    }

    /// The destination's places for the listener (its station's and output's, its address's); why not, or nil.
    private func takePlaces(for listener: Listener) -> String? {
        guard broadcaster.audience.reserve() else { return "the destination station is full" }
        guard counters.listeners.reserve(limit: configuration.maxListeners) else {
            broadcaster.audience.release()
            return "the destination output is full"
        }
        guard broadcaster.reserveHost(listener.hostKey, limit: configuration.maxPerIP) else {
            counters.listeners.release()
            broadcaster.audience.release()
            return "too many connections from their address at the destination"
        }
        return nil
    }

    /// Where a listener goes on in `destination`: the ring index of its first page there, the page it is partly
    /// sent (finished first), and how its pages are carried.
    struct MovePlace {
        var start: Int64
        var carried: SharedPage?
        var ogg: OggSplice?
    }

    /// Nil when its place in its own stream is gone (the ring dropped the page it was last sent).
    private func place(of listener: Listener, in destination: NetworkLoop) -> MovePlace? {
        guard let cursor = listener.state.cursor else {
            return MovePlace(start: destination.ring.head, carried: nil, ogg: nil)
        }
        let isOgg = !ring.headers.isEmpty
        let inHeaders = listener.state.headersSent < listener.headers.count
        var carried: SharedPage?
        var last: SharedPage?
        if inHeaders {
            last = listener.headers.last
        } else if listener.state.offset > 0 {
            carried = page(cursor, for: listener)
            guard carried != nil else { return nil }
            last = carried
        } else {
            last = page(cursor - 1, for: listener)
            guard last != nil || !isOgg else { return nil }
        }
        // As far behind the destination's live edge as it is behind this one's.
        let position = (inHeaders ? page(cursor, for: listener)?.timeline : last?.timeline) ?? newestTimeline
        let behind = max(0, newestTimeline &- position)
        let start = destination.startIndex(behind: behind)
        guard isOgg else { return MovePlace(start: start, carried: carried, ogg: nil) }
        // Its own stream's head: its first headers, or those of the stream it passes into after a new link.
        let passing = listener.splice.map { !$0.keepsHeaders && $0.stream != nil } ?? false
        guard let lastPage = last,
            let headPage = passing ? ring.headers.first : listener.headers.first ?? ring.headers.first
        else { return nil }
        var ogg = OggSplice(
            lastPage: lastPage.bytes, headPage: headPage.bytes, base: destination.granule(before: start))
        ogg?.meet(headers: destination.ring.headers.map(\.bytes))
        guard let ogg else { return nil }
        return MovePlace(start: start, carried: carried, ogg: ogg)
    }

    /// The timeline position of the newest page in view (0 when none).
    var newestTimeline: Int64 { ring.newestTimeline ?? 0 }

    /// The first clean page (not continued, not a header) ending more than `behind` before the live edge; the head
    /// when none is in view. Never the oldest page held: the one before it gives the granule to count on from.
    private func startIndex(behind: Int64) -> Int64 {
        let target = newestTimeline &- behind
        var offset = 1
        while offset < ring.count {
            if ring.timeline(at: offset) > target && !ring.isContinued(at: offset) && !ring.isHeader(at: offset) {
                return ring.oldest + Int64(offset)
            }
            offset += 1
        }
        return ring.head
    }

    /// The granule position the page before `index` ends at: 0 at a link's start (its header pages), or when it is
    /// not in view.
    private func granule(before index: Int64) -> Int64 {
        var at = index - 1
        while let page = ring.page(at), !page.isHeader, at >= index - 16 {
            let granule = OggSplice.granule(of: page.bytes)
            if granule >= 0 { return granule }
            at -= 1
        }
        return 0
    }

    /// Hands the listener over: out of this output's tables and places, into the destination's, its pages from
    /// `place` on; the access log's line for this mount, and its roster entry for the new one.
    private func handOver(_ listener: Listener, to destination: NetworkLoop, at place: MovePlace, now: Double) -> Bool {
        // Out of this output's tables (its socket, epoll registration and deadline stay: they are the loop's).
        guard leave(listener) else { return false }
        leaveScan(listener)
        releaseStationPlaces(listener.hostKey)
        if listener.kind == .http { counters.httpListeners.subtract(1, ordering: .relaxed) }
        broadcaster.statistics.withLock { $0.left(joinedAt: listener.connectedAt, at: now) }
        let bytes = listener.bytesSent - listener.responseHeadSent
        if let accessLog = broadcaster.accessLog, accessLog.isOpen {
            accessLog.write(
                AccessRecord(
                    leaving: listener.entry, request: listener.request, bytes: bytes - listener.bytesBefore,
                    seconds: now - listener.connectedAt))
        }
        if broadcaster.station != destination.broadcaster.station, let session = listener.session {
            session.end(.moved, now: now)  // the destination does not ask this station's backend
            listener.session = nil
        }
        let old = listener.entry
        let entry = ListenerEntry(
            id: old.id, place: destination.broadcaster.listenerMount(old.kind), address: old.address,
            userAgent: old.userAgent, username: old.username, connectedAt: old.connectedAt)
        entry.bytes.store(listener.bytesSent, ordering: .relaxed)
        listener.entry = entry
        // The same ID, now on the destination's mount (both outputs' admission is the server's: one roster).
        broadcaster.admission.leave(old)
        destination.broadcaster.admission.roster.add(entry)
        listener.connectedAt = now
        listener.bytesBefore = bytes
        listener.request = listener.request.map { $0.moved(to: entry.mount) }
        destination.takeIn(listener, at: place, now: now)
        if Log.isEnabled(.info) {
            logLimited(
                .joined, .info, now: now,
                "\(name): \(listener.kind.rawValue) listener #\(entry.id) \(listener.peer) moved to \(destination.name)"
            )
        }
        return true
    }

    /// The listener, moved here, goes on from `place`.
    private func takeIn(_ listener: Listener, at place: MovePlace, now: Double) {
        enter(listener)
        host.reassign(listener.fd, to: self)
        if listener.kind == .http { counters.httpListeners.add(1, ordering: .relaxed) }
        broadcaster.statistics.withLock { $0.joined(at: now) }
        if listener.state.cursor == nil {
            // Nothing sent yet: it starts here as a new listener does.
            listener.headers = []
            listener.headersLink = nil
        } else {
            let before = place.start - 1
            listener.splice =
                place.ogg != nil || place.carried != nil
                ? ListenerSplice(
                    stream: place.ogg.map { splicedStream($0, start: place.start) }, carried: place.carried,
                    at: before) : nil
            listener.partial = place.carried
            listener.state.cursor = place.carried != nil ? before : place.start
            // Lag is read on this ring's timeline from now on (the carried page's is the other station's).
            listener.state.partialTimeline = place.carried != nil ? newestTimeline : nil
            listener.state.link = ring.headerLink
            listener.headersLink = ring.headerLink
            listener.state.headerCount = listener.headers.count
        }
        if !listener.state.backedUp { enterScan(listener) }
        flush(listener, now: now)
    }

    /// The stream that carries this output's pages on for a listener moved here in `ogg`'s state from `start`: the one
    /// made for a listener moved with it (the same state, the same page), or a new one.
    private func splicedStream(_ ogg: OggSplice, start: Int64) -> SplicedStream {
        splicedStreams.removeAll { $0.stream == nil }
        if let shared = splicedStreams.lazy.compactMap(\.stream).first(where: { $0.origin == ogg && $0.start == start })
        {
            return shared
        }
        let stream = SplicedStream(ogg, start: start, keep: broadcaster.ring.capacity)
        splicedStreams.append(WeakSplicedStream(stream: stream))
        return stream
    }
}

/// A spliced stream while a listener holds it.
struct WeakSplicedStream {
    weak var stream: SplicedStream?
}
