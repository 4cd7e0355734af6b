import CLinux
import Glibc
import Synchronization

/// One listener's connection, confined to the network thread.
final class Listener {
    let fd: Int32
    let peer: SocketAddress
    let host: String
    let connectedAt: Double
    /// Header pages already sent in full.
    var headersSent = 0
    /// Ring index of the next page to send; nil until the first audio page exists.
    var cursor: Int64?
    /// Bytes of the current page (a header while `headersSent < headers.count`) already written.
    var offset = 0
    /// Keeps a partly written page alive even if the ring drops it meanwhile.
    var partial: SharedPage?
    var bytesSent = 0
    var bytesRead = 0
    var backedUp = false
    var moved = false
    var lastFlush = -Double.infinity

    init(fd: Int32, peer: SocketAddress, connectedAt: Double) {
        self.fd = fd
        self.peer = peer
        self.host = peer.host
        self.connectedAt = connectedAt
    }
}

/// The epoll loop behind a Broadcaster. Everything here lives on the network thread.
final class NetworkLoop {
    private static let listenTag: UInt64 = UInt64.max
    private static let wakeTag: UInt64 = UInt64.max - 1
    private static let maxIOV = 64

    private let broadcaster: Broadcaster
    let configuration: BroadcasterConfiguration
    let counters: BroadcasterCounters
    let name: String
    let epoll: Int32
    let listenFD: Int32
    private let wakeFD: Int32

    /// Listeners by file descriptor, and the list of them for iteration (swap-remove through `position`).
    var byFD: [Listener?] = []
    var active: [Listener] = []
    var position: [Int] = []
    var perHost: [String: Int] = [:]

    private var headers: [SharedPage] = []
    private var window: [SharedPage] = []
    private var oldest: Int64 = 0
    /// When the earliest deferred flush is due (monotonic seconds), if any listener has pages waiting.
    private var nextDue: Double?
    private var iov: UnsafeMutablePointer<iovec>
    var scratch = [UInt8](repeating: 0, count: 4096)
    private var events = [UInt32](repeating: 0, count: 256)
    private var tags = [UInt64](repeating: 0, count: 256)

    init(broadcaster: Broadcaster, listenFD: Int32, wakeFD: Int32) throws {
        self.broadcaster = broadcaster
        self.configuration = broadcaster.configuration
        self.counters = broadcaster.counters
        self.name = broadcaster.name
        self.listenFD = listenFD
        self.wakeFD = wakeFD
        epoll = rr_epoll_create()
        guard epoll >= 0 else { throw SystemError("epoll_create1") }
        iov = .allocate(capacity: Self.maxIOV)
        guard rr_epoll_ctl(epoll, EPOLL_CTL_ADD, listenFD, EPOLLIN.rawValue, Self.listenTag) == 0,
              rr_epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFD, EPOLLIN.rawValue, Self.wakeTag) == 0
        else { throw SystemError("epoll_ctl") }
    }

    deinit {
        iov.deallocate()
        close(epoll)
    }

    func run(until stopping: borrowing Atomic<Bool>) {
        Log.info("\(name): listening on \(broadcaster.address)")
        refresh()
        while !stopping.load(ordering: .acquiring) {
            // Sleep until the next deferred flush is due, or half a second.
            let wait = nextDue.map { Int32(max(0, min(500, (($0 - monotonicNow()) * 1000).rounded(.up)))) } ?? 500
            let count = events.withUnsafeMutableBufferPointer { e in
                tags.withUnsafeMutableBufferPointer { t in
                    rr_epoll_wait(epoll, e.baseAddress, t.baseAddress, Int32(e.count), wait)
                }
            }
            if count < 0 {
                if errno == EINTR { continue }
                Log.error("\(name): epoll_wait: \(SystemError("epoll_wait"))")
                break
            }
            var published = false
            for i in 0..<Int(count) {
                let tag = tags[i]
                let mask = events[i]
                if tag == Self.listenTag {
                    acceptAll()
                } else if tag == Self.wakeTag {
                    _ = rr_eventfd_drain(wakeFD)
                    published = true
                } else {
                    let fd = Int(tag)
                    guard fd < byFD.count, let listener = byFD[fd] else { continue }
                    if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                        disconnect(listener, reason: "connection reset")
                        continue
                    }
                    if mask & EPOLLIN.rawValue != 0 {
                        guard readAndDiscard(listener) else { continue }
                    }
                    if mask & EPOLLOUT.rawValue != 0 { flush(listener, now: monotonicNow()) }
                }
            }
            if published {
                refresh()
                flushDue()
            } else if let due = nextDue, monotonicNow() >= due {
                flushDue()
            }
        }
        for listener in active { disconnect(listener, reason: "server stopping", quiet: true) }
        Log.info("\(name): stopped listening")
    }

    // MARK: Pages

    /// Takes a fresh view of the ring (one lock for all listeners).
    func refresh() {
        oldest = broadcaster.ring.window(into: &window)
        if headers.isEmpty { headers = broadcaster.ring.headers }
    }

    private var head: Int64 { oldest + Int64(window.count) }

    private func page(_ index: Int64, for listener: Listener) -> SharedPage? {
        if index >= oldest && index < head { return window[Int(index - oldest)] }
        if let partial = listener.partial, partial.index == index { return partial }
        return nil
    }

    /// Where a new listener starts: the first clean page at most `burst` seconds before the live edge.
    private func burstStart() -> Int64 {
        guard let live = window.last else { return head }
        let from = live.granulePosition - Int64(configuration.burst * 48_000)
        for page in window where page.granulePosition > from && !page.isContinued { return page.index }
        return liveEdge()
    }

    /// The newest clean page (so a moved listener resumes at a packet boundary).
    private func liveEdge() -> Int64 {
        for page in window.reversed() where !page.isContinued { return page.index }
        return head
    }

    /// Writes to every listener whose flush interval has passed (or whose socket is backed up, to check its lag),
    /// and notes when the earliest of the others with pages waiting is due.
    private func flushDue() {
        let now = monotonicNow()
        let interval = configuration.flushInterval
        // Three quarters of the interval: a page published a little early must not push a flush a whole page later.
        let threshold = interval * 0.75
        var earliest: Double?
        var i = 0
        while i < active.count {
            let listener = active[i]
            if listener.backedUp || now - listener.lastFlush >= threshold {
                flush(listener, now: now)
            } else if hasPending(listener) {
                // Normally the next publish brings the next flush, keeping each listener's writes in step with the
                // pages (a write right after a page completes). The timer is the fallback for an upstream that
                // delivers in bursts: no page waits more than two intervals.
                let due = listener.lastFlush + 2 * interval
                earliest = min(earliest ?? due, due)
            }
            // flush may disconnect (swap-remove) the current listener: then the same index holds the next one.
            if i < active.count && active[i] === listener { i += 1 }
        }
        nextDue = earliest
    }

    private func hasPending(_ listener: Listener) -> Bool {
        listener.headersSent < headers.count || (listener.cursor.map { $0 < head } ?? !window.isEmpty)
    }

    // MARK: Writing

    /// Seconds of audio between the listener's next page and the live edge.
    private func lag(of listener: Listener) -> Double {
        guard let cursor = listener.cursor, let live = window.last else { return 0 }
        guard cursor < head else { return 0 }
        guard let page = page(cursor, for: listener) else { return .infinity }  // overtaken by the ring
        return Double(live.granulePosition - page.granulePosition) / 48_000
    }

    func flush(_ listener: Listener, now: Double) {
        if listener.cursor == nil, !window.isEmpty || !headers.isEmpty {
            listener.cursor = burstStart()
        }
        let lag = lag(of: listener)
        // Too far behind: moved to the live edge once, at a page boundary (the partly sent page is finished first,
        // so the listener's Ogg stream stays valid); disconnected when it falls behind again, or when it does not
        // even finish its page before twice the allowance.
        var finishPageOnly = false
        if lag > configuration.maxLag {
            if listener.moved || lag > 2 * configuration.maxLag {
                counters.droppedSlow.add(1, ordering: .relaxed)
                disconnect(listener, reason: "too slow (\(Int(lag)) s behind\(listener.moved ? " after a move" : ""))")
                return
            }
            if listener.offset == 0 && listener.headersSent == headers.count {
                listener.moved = true
                listener.cursor = liveEdge()
                listener.partial = nil
                counters.moved.add(1, ordering: .relaxed)
                Log.notice("\(name): listener \(listener.peer) fell \(Int(lag)) s behind, moved to the live edge")
            } else {
                finishPageOnly = true
            }
        }
        var count = 0
        var total = 0
        var offset = listener.offset
        for index in listener.headersSent..<headers.count where count < Self.maxIOV {
            let bytes = headers[index].bytes
            iov[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + offset),
                               iov_len: bytes.count - offset)
            total += bytes.count - offset
            offset = 0
            count += 1
        }
        if var index = listener.cursor {
            let limit = finishPageOnly ? min(head, index + 1) : head
            while index < limit && count < Self.maxIOV {
                guard let page = page(index, for: listener) else { break }
                let bytes = page.bytes
                iov[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + offset),
                                   iov_len: bytes.count - offset)
                total += bytes.count - offset
                offset = 0
                count += 1
                index += 1
            }
        }
        listener.lastFlush = now
        guard count > 0 else { return }
        var written = 0
        while true {
            let n = writev(listener.fd, iov, Int32(count))
            if n >= 0 { written = n; break }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { break }
            disconnect(listener, reason: "write failed: \(String(cString: strerror(errno)))")
            return
        }
        advance(listener, by: written)
        setBackedUp(listener, written < total)
    }

    private func advance(_ listener: Listener, by written: Int) {
        listener.bytesSent += written
        counters.bytesSent.add(written, ordering: .relaxed)
        var remaining = written
        while remaining > 0, listener.headersSent < headers.count {
            let left = headers[listener.headersSent].bytes.count - listener.offset
            if remaining >= left {
                remaining -= left
                listener.headersSent += 1
                listener.offset = 0
            } else {
                listener.offset += remaining
                return
            }
        }
        while remaining > 0, let cursor = listener.cursor, let page = page(cursor, for: listener) {
            let left = page.bytes.count - listener.offset
            if remaining >= left {
                remaining -= left
                listener.cursor = cursor + 1
                listener.offset = 0
                listener.partial = nil
            } else {
                listener.offset += remaining
                listener.partial = page
                return
            }
        }
    }

    private func setBackedUp(_ listener: Listener, _ backedUp: Bool) {
        guard listener.backedUp != backedUp else { return }
        listener.backedUp = backedUp
        let mask = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (backedUp ? EPOLLOUT.rawValue : 0)
        _ = rr_epoll_ctl(epoll, EPOLL_CTL_MOD, listener.fd, mask, UInt64(listener.fd))
    }
}

/// Seconds on the monotonic clock.
func monotonicNow() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
