import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// One output's listeners on one loop of the `NetworkPool` (its `PoolLoop`): everything here lives on that loop's
/// thread. The rules — where a listener starts, when it is written, when it is moved or dropped — are the
/// `ListenerSchedule`'s; this type executes them (sendmsg, epoll, close). Limits that span the pool's loops (the
/// station's listener count and per-address counts) are the Broadcaster's.
package final class NetworkLoop {
    static let maxIOV = 64
    /// `sendmsg` calls per listener per flush at most.
    static let maxSends = 16
    /// Connections accepted per wake-up at most: a storm is admitted in batches between which the loop serves the
    /// listeners already connected (each admission writes the headers and burst at once, ~20 µs).
    package static let acceptBatch = 128
    package let broadcaster: Broadcaster
    package private(set) var configuration: BroadcasterConfiguration
    package private(set) var schedule: ListenerSchedule
    /// The Broadcaster's settings version these were taken at.
    private var settingsVersion = 0
    package let counters: BroadcasterCounters
    package let name: String
    /// The pool loop it runs on, and that loop's skeleton: epoll, accepting, the PROXY-header wait, deadlines,
    /// heartbeat, rate-limited log lines.
    package unowned let host: PoolLoop
    package let loop: EventLoop

    /// Listeners by file descriptor, and the list of them for iteration (swap-remove through `position`).
    package var byFD: [Listener?] = []
    package var active: [Listener] = []
    /// The listeners a publication looks at: those whose socket is not backed up (`NetworkLoop+Watch.swift`).
    package var scan: [Listener] = []
    package var position: [Int] = []

    package var ring = RingSnapshot()
    /// The view was refreshed in this wake-up already (an accept batch's first admission refreshes it).
    package var refreshedThisWake = false
    /// The Broadcaster's publication count its view was last refreshed at (when the count moved, it published since).
    var seenPublications = -1
    /// When the earliest deferred flush is due (monotonic seconds), if any listener has pages waiting.
    var nextDue: Double?
    /// The ring head the last flush of every listener saw: pages past it are new to the schedule, whoever refreshed
    /// the view (an accept batch earlier in the same wake-up refreshes it before the eventfd is looked at).
    var scheduledHead: Int64 = 0
    private var iov: UnsafeMutablePointer<iovec>
    /// An MP3 pass-through output's ICY block for the newest title (`Broadcaster.icyBlock`), as of the last refresh.
    var icyBlock: SharedPage?
    /// The blocks the last `addICYPages` put in the iovecs, in order.
    var icyInserted: [SharedPage] = []
    /// The streams of listeners moved here, shared by those moved together (`NetworkLoop+Move`).
    var splicedStreams: [WeakSplicedStream] = []

    package init(broadcaster: Broadcaster, host: PoolLoop) {
        self.broadcaster = broadcaster
        self.host = host
        self.loop = host.loop
        self.configuration = broadcaster.configuration
        self.schedule = ListenerSchedule(broadcaster.configuration)
        self.counters = broadcaster.counters
        self.name = broadcaster.name
        iov = .allocate(capacity: Self.maxIOV)
        settingsVersion = broadcaster.settingsVersion.load(ordering: .acquiring)
        retune()
    }

    deinit {
        iov.deallocate()
    }

    /// Takes the broadcaster's settings when a reload changed them (one atomic load when it did not).
    func refreshSettings() {
        let version = broadcaster.settingsVersion.load(ordering: .acquiring)
        guard version != settingsVersion else { return }
        settingsVersion = version
        configuration = broadcaster.configuration
        schedule = ListenerSchedule(configuration)
        retune()
    }

    /// The flush interval for the process's audience (`flush_ms = auto` follows it: every loop's listeners, of
    /// every output).
    package func retune() {
        schedule.retune(listeners: host.audience)
    }

    /// Closes every listener (the output stops, or the loop does).
    package func closeAll() {
        for listener in active { disconnect(listener, reason: "server stopping", quiet: true, ended: .stopped) }
    }

    // MARK: Pages

    /// Takes a fresh view of the ring (one lock for all listeners).
    package func refresh() {
        seenPublications = broadcaster.publications.load(ordering: .acquiring)
        ring.refresh(from: broadcaster.ring)
        icyBlock = broadcaster.icyBlock.snapshot
    }

    func page(_ index: Int64, for listener: Listener) -> SharedPage? {
        if let splice = listener.splice, let page = splice.page(index, ring: ring) { return page }
        if let page = ring.page(index) { return page }
        if let partial = listener.partial, partial.index == index { return partial }
        return nil
    }

    /// Writes to every listener the schedule finds due, and notes when the earliest of the others is due. Listeners
    /// whose socket is backed up are not looked at: their `EPOLLOUT` or their recheck deadline brings them.
    func flushDue() {
        let now = monotonicNow()
        var earliest: Double?
        var i = 0
        while i < scan.count {
            let listener = scan[i]
            switch schedule.due(listener.state, now: now, window: ring) {
            case .now: flush(listener, now: now)
            case .at(let due): earliest = min(earliest ?? due, due)
            case .idle: break
            }
            // flush may disconnect the current listener, or find it backed up (both swap-remove it from `scan`):
            // then the same index holds the next one.
            if i < scan.count && scan[i] === listener { i += 1 }
        }
        nextDue = earliest
    }

    // MARK: Writing

    /// Executes the schedule's decision for one listener: one `sendmsg` of the remaining headers and its pages, or a
    /// move to the live edge first, or a disconnection.
    package func flush(_ listener: Listener, now: Double) {
        let end: Int64
        switch schedule.plan(&listener.state, now: now, window: ring) {
        case .write(let limit):
            end = limit
        case .moved(let lag, let limit):
            end = limit
            listener.partial = nil
            counters.moved.add(1, ordering: .relaxed)
            let behind =
                if case .seconds(let seconds) = lag { "fell \(wholeSeconds(seconds)) s behind" } else {
                    "was overtaken by the ring"
                }
            logLimited(
                .moved, .notice, now: now, "\(name): listener \(listener.peer) \(behind), moved to the live edge")
        case .drop(let reason):
            counters.droppedSlow.add(1, ordering: .relaxed)
            disconnect(listener, reason: reason.description, topic: .dropped, ended: .tooSlow)
            return
        case .end:
            // The backend's time limit when it is what ended it, else `max_listener_duration`.
            if let endsAt = listener.session?.endsAt, endsAt <= listener.state.endsAt {
                let limit = wholeSeconds(endsAt - (listener.session?.began ?? endsAt))
                disconnect(
                    listener, reason: "time limit (\(limit) s, icecast-auth-timelimit)", topic: .sessionEnded,
                    ended: .timeLimit)
                return
            }
            counters.sessionsEnded.add(1, ordering: .relaxed)
            let limit = wholeSeconds(configuration.maxListenerDuration)
            disconnect(
                listener, reason: "session limit (\(limit) s, max_listener_duration)", topic: .sessionEnded,
                ended: .sessionLimit)
            return
        }
        if listener.splice?.keepsHeaders == true && listener.headersLink != listener.state.link {  // never the ring's
            listener.state.headerCount = listener.headers.count
            listener.state.headersSent = listener.headers.count
            listener.state.offset = 0
            listener.headersLink = listener.state.link
        }
        // Headers to send that it does not hold yet: the current link's, as the schedule chose them from this view.
        if listener.state.headersSent < listener.state.headerCount && listener.headersLink != listener.state.link {
            listener.headers = ring.headers
            listener.headersLink = ring.headerLink
        }
        // Each sendmsg takes at most `maxIOV` pieces: while the socket takes them all and more are due (a burst of
        // small pages, an ICY listener's blocks), another goes at once, up to `maxSends`.
        var sends = 1
        let before = listener.bytesSent
        while send(listener, upTo: end) && sends < Self.maxSends { sends += 1 }
        if listener.bytesSent != before { listener.lastProgress = now }
    }

    /// Sends what is due up to ring index `end` in one `sendmsg`: the rest of the response head, the headers, the
    /// pages (with ICY blocks). True when the socket took all of it and the iovecs were full (more may be due).
    private func send(_ listener: Listener, upTo end: Int64) -> Bool {
        icyInserted.removeAll(keepingCapacity: true)
        var count = 0
        var total = 0
        let responseHead = listener.unsentResponseHead
        if !responseHead.isEmpty {
            total += add(responseHead, from: 0, at: count)
            count += 1
        }
        var offset = listener.state.offset
        let headers = listener.headers
        for index in listener.state.headersSent..<headers.count where count < Self.maxIOV {
            total += add(headers[index].bytes, from: offset, at: count)
            offset = 0
            count += 1
        }
        if listener.icy != nil, let index = listener.state.cursor {
            addICYPages(listener, from: index, to: end, offset: offset, count: &count, total: &total)
        } else if var index = listener.state.cursor {
            while index < end && count < Self.maxIOV {
                guard let page = page(index, for: listener) else { break }
                total += add(page.bytes, from: offset, at: count)
                offset = 0
                count += 1
                index += 1
            }
        }
        guard count > 0 else { return false }
        let written: Int
        do {
            // sendmsg with MSG_NOSIGNAL, not writev: a listener that is gone gives EPIPE, never SIGPIPE, whatever
            // the embedding process does with that signal.
            switch try nonblockingSyscall("sendmsg", { rr_send_iov(listener.fd, iov, Int32(count)) }) {
            case .done(let n): written = n
            case .wouldBlock: written = 0
            }
        } catch {
            disconnect(listener, reason: "write failed: \(String(cString: strerror(error.errno)))")
            return false
        }
        advance(listener, by: written)
        setBackedUp(listener, written < total)
        return written == total && count == Self.maxIOV
    }

    /// Puts `bytes[offset...]` (`length` of them; nil: to the end) in iovec slot `slot`; returns its length.
    func add(_ bytes: UnsafeRawBufferPointer, from offset: Int, length: Int? = nil, at slot: Int) -> Int {
        let length = length ?? bytes.count - offset
        iov[slot] = iovec(
            iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress.map { $0 + offset }),
            iov_len: length)
        return length
    }

    private func advance(_ listener: Listener, by written: Int) {
        listener.bytesSent += written
        listener.entry.bytes.store(listener.bytesSent, ordering: .relaxed)
        counters.bytesSent.add(written, ordering: .relaxed)
        var remaining = written
        let responseHead = listener.unsentResponseHead.count
        if responseHead > 0 {
            listener.responseHeadSent += min(remaining, responseHead)
            remaining -= min(remaining, responseHead)
        }
        let headers = listener.headers
        while remaining > 0, listener.state.headersSent < headers.count {
            let left = headers[listener.state.headersSent].bytes.count - listener.state.offset
            if remaining >= left {
                remaining -= left
                listener.state.headersSent += 1
                listener.state.offset = 0
            } else {
                listener.state.offset += remaining
                return
            }
        }
        if listener.icy != nil {
            advanceICY(listener, by: remaining)
            return
        }
        // A moved listener's page may be empty (a header page its own stream leaves out): passed at once.
        while let cursor = listener.state.cursor, let page = page(cursor, for: listener),
            remaining > 0 || page.bytes.isEmpty
        {
            let sent = min(remaining, page.bytes.count - listener.state.offset)
            remaining -= sent
            advance(listener, in: page, at: cursor, by: sent)
        }
    }

    /// Moves the listener `sent` bytes on in `page` (ring index `cursor`, where it is): to the next page when that
    /// finishes it.
    func advance(_ listener: Listener, in page: SharedPage, at cursor: Int64, by sent: Int) {
        listener.state.offset += sent
        if listener.state.offset >= page.bytes.count {
            listener.state.cursor = cursor + 1
            listener.state.offset = 0
            listener.state.partialTimeline = nil
            listener.state.link = page.link
            listener.partial = nil
            if let splice = listener.splice {
                splice.trim(cursor: cursor + 1)
                if splice.isDone(cursor: cursor + 1) { listener.splice = nil }
            }
        } else {
            listener.state.partialTimeline = page.timeline
            listener.partial = page
        }
    }
}

@available(*, unavailable) extension NetworkLoop: Sendable {}
