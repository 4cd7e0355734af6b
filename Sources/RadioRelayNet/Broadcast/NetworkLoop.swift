import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The epoll loop behind a Broadcaster. Everything here lives on the network thread. The rules — where a listener
/// starts, when it is written, when it is moved or dropped — are the `ListenerSchedule`'s; this type executes them
/// (sendmsg, epoll, close).
package final class NetworkLoop {
    package static let listenTag: UInt64 = UInt64.max
    private static let wakeTag: UInt64 = UInt64.max - 1
    private static let maxIOV = 64
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
    package let epoll: Epoll

    /// Listeners by file descriptor, and the list of them for iteration (swap-remove through `position`).
    package var byFD: [Listener?] = []
    package var active: [Listener] = []
    package var position: [Int] = []
    package var perHost: [HostKey: Int] = [:]
    /// Whether the listening socket is watched, and when it is watched again after `accept4` ran out of resources.
    package var listenWatched = true
    package var backoff = AcceptBackoff()
    /// Lines that a storm could repeat (refusals, moves, drops): at most 10 per kind per 10 s, then a count.
    package var logLimit = LogRateLimit<LogTopic>(limit: 10, window: 10)
    /// Connections waiting for their PROXY header (only with `proxyProtocol`; `NetworkLoop+Proxy.swift`).
    package var awaitingProxy = ProxyHeaderWait<Int32, AwaitingProxyHeader>()

    package var ring = RingSnapshot()
    /// When the earliest deferred flush is due (monotonic seconds), if any listener has pages waiting.
    private var nextDue: Double?
    /// The ring head the last flush of every listener saw: pages past it are new to the schedule, whoever refreshed
    /// the view (an accept batch earlier in the same wake-up refreshes it before the eventfd is looked at).
    private var scheduledHead: Int64 = 0
    private var iov: UnsafeMutablePointer<iovec>
    package var scratch = [UInt8](repeating: 0, count: 4096)

    package init(broadcaster: Broadcaster) throws(SystemError) {
        self.broadcaster = broadcaster
        self.configuration = broadcaster.configuration
        self.schedule = ListenerSchedule(broadcaster.configuration)
        self.counters = broadcaster.counters
        self.name = broadcaster.name
        epoll = try Epoll()
        iov = .allocate(capacity: Self.maxIOV)
        do {
            try epoll.add(broadcaster.listenSocket.rawValue, events: EPOLLIN.rawValue, tag: Self.listenTag)
            try epoll.add(broadcaster.wakeEvent.rawValue, events: EPOLLIN.rawValue, tag: Self.wakeTag)
        } catch {
            iov.deallocate()
            throw error
        }
    }

    deinit {
        iov.deallocate()
    }

    package var listenFD: Int32 { broadcaster.listenSocket.rawValue }

    /// Takes the broadcaster's settings when a reload changed them (one atomic load when it did not).
    private func refreshSettings() {
        let version = broadcaster.settingsVersion.load(ordering: .acquiring)
        guard version != settingsVersion else { return }
        settingsVersion = version
        configuration = broadcaster.configuration
        schedule = ListenerSchedule(configuration)
    }

    /// Serves until `thread` is asked to stop; every iteration (at least one per half second) beats its heartbeat.
    /// A failing `epoll_wait` is thrown: the loop cannot go on, and the thread's owner decides what follows.
    package func run(in thread: ServiceThread) throws {
        Log.info("\(name): listening on \(broadcaster.address)")
        refresh()
        defer {
            for listener in active { disconnect(listener, reason: "server stopping", quiet: true) }
            logSummaries(now: .infinity)  // what the rate limit left out, counted before the last line
            Log.info("\(name): stopped listening")
        }
        while !thread.isStopping {
            thread.beat()
            refreshSettings()
            let now = monotonicNow()
            if backoff.resumes(now: now) { watchListenSocket(true) }
            if let due = logLimit.nextSummary, now >= due { logSummaries(now: now) }
            // Sleep until the next deferred flush is due, the accept pause ends, a PROXY header is late, or 0.5 s.
            let until = [nextDue, backoff.resumeAt, expireProxyWaits(now: now)].compactMap { $0 }.min()
            let wait = ListenerSchedule.waitMilliseconds(until: until, now: now)
            let count = try epoll.wait(timeoutMilliseconds: wait)
            refreshSettings()  // a reload made while it slept applies to what this wake-up brings
            var published = false
            for i in 0..<count {
                let (tag, mask) = epoll.event(at: i)
                if tag == Self.listenTag {
                    acceptBatch()
                } else if tag == Self.wakeTag {
                    drainWake()
                    // The eventfd also says "HTTP listeners arrived": every listener is looked at only when pages
                    // were published too (admitting refreshes the snapshot, so ask first).
                    published = published || broadcaster.ring.nextIndex != ring.head
                    admitArrivals()
                } else {
                    guard tag < UInt64(byFD.count), let listener = byFD[Int(tag)] else {
                        if !awaitingProxy.isEmpty, let fd = Int32(exactly: tag) { readProxyHeader(fd) }
                        continue
                    }
                    if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                        disconnect(listener, reason: listener.readClosed ? "closed by listener" : "connection reset")
                        continue
                    }
                    if mask & EPOLLIN.rawValue != 0 && !listener.readClosed {
                        guard readAndDiscard(listener) else { continue }
                    }
                    if mask & EPOLLOUT.rawValue != 0 { flush(listener, now: monotonicNow()) }
                }
            }
            if published || ring.head != scheduledHead {
                // Without the second test, pages published while an accept batch ran were seen by the batch's
                // refresh only, and the listeners already there waited for their fallback deadline (up to twice
                // the flush interval: stalls of ~500 ms during every connect ramp).
                refresh()
                scheduledHead = ring.head
                flushDue()
            } else if let due = nextDue, monotonicNow() >= due {
                flushDue()
            }
        }
    }

    private func drainWake() {
        do {
            _ = try broadcaster.wakeEvent.drain()
        } catch {
            Log.warning("\(name): \(error)")
        }
    }

    // MARK: Pages

    /// Takes a fresh view of the ring (one lock for all listeners).
    package func refresh() {
        ring.refresh(from: broadcaster.ring)
    }

    private func page(_ index: Int64, for listener: Listener) -> SharedPage? {
        if let page = ring.page(index) { return page }
        if let partial = listener.partial, partial.index == index { return partial }
        return nil
    }

    /// Writes to every listener the schedule finds due, and notes when the earliest of the others is due.
    private func flushDue() {
        let now = monotonicNow()
        var earliest: Double?
        var i = 0
        while i < active.count {
            let listener = active[i]
            switch schedule.due(listener.state, now: now, window: ring) {
            case .now: flush(listener, now: now)
            case .at(let due): earliest = min(earliest ?? due, due)
            case .idle: break
            }
            // flush may disconnect (swap-remove) the current listener: then the same index holds the next one.
            if i < active.count && active[i] === listener { i += 1 }
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
            disconnect(listener, reason: reason.description, topic: .dropped)
            return
        }
        // Headers to send that it does not hold yet: the current link's, as the schedule chose them from this view.
        if listener.state.headersSent < listener.state.headerCount && listener.headersLink != listener.state.link {
            listener.headers = ring.headers
            listener.headersLink = ring.headerLink
        }
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
        if var index = listener.state.cursor {
            while index < end && count < Self.maxIOV {
                guard let page = page(index, for: listener) else { break }
                total += add(page.bytes, from: offset, at: count)
                offset = 0
                count += 1
                index += 1
            }
        }
        guard count > 0 else { return }
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
            return
        }
        advance(listener, by: written)
        setBackedUp(listener, written < total)
    }

    /// Puts `bytes[offset...]` in iovec slot `slot`; returns its length.
    private func add(_ bytes: UnsafeRawBufferPointer, from offset: Int, at slot: Int) -> Int {
        let length = bytes.count - offset
        iov[slot] = iovec(
            iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress.map { $0 + offset }),
            iov_len: length)
        return length
    }

    private func advance(_ listener: Listener, by written: Int) {
        listener.bytesSent += written
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
        while remaining > 0, let cursor = listener.state.cursor, let page = page(cursor, for: listener) {
            let left = page.bytes.count - listener.state.offset
            if remaining >= left {
                remaining -= left
                listener.state.cursor = cursor + 1
                listener.state.offset = 0
                listener.state.partialTimeline = nil
                listener.state.link = page.link
                listener.partial = nil
            } else {
                listener.state.offset += remaining
                listener.state.partialTimeline = page.timeline
                listener.partial = page
                return
            }
        }
    }
}

@available(*, unavailable) extension NetworkLoop: Sendable {}
