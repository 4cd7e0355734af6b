import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The thread of a `TimeShiftService`: admits the listeners handed over, then every `tick` (or when a socket wants
/// it) reads each one's archive ahead and writes its socket, with `poll` over its sockets for their closing and
/// their room. Everything here is confined to that thread.
final class TimeShiftLoop {
    /// Seconds between two rounds while anyone listens.
    static let tick = 0.04
    /// `POLLRDHUP` (the peer shut its side down), which Glibc's module leaves out.
    static let readHangUp: Int32 = 0x2000

    let service: TimeShiftService
    var listeners: [TimeShiftListener] = []
    var perAddress: [HostKey: Int] = [:]
    var scratch = [UInt8](repeating: 0, count: TimeShiftListener.readChunk)
    var logLimit = LogRateLimit<String>(limit: 10, window: 10)
    /// Archive HLS segments being sent, each on a connection closed once it is out.
    var replies: [Reply] = []

    init(_ service: TimeShiftService) { self.service = service }

    var broadcaster: Broadcaster { service.broadcaster }
    var label: String { "\(broadcaster.station) \(broadcaster.mount)" }

    func run(in thread: ServiceThread) {
        var fds: [pollfd] = []
        while !thread.isStopping {
            thread.beat()
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: service.wake.rawValue, events: Int16(POLLIN), revents: 0))
            for reply in replies {
                fds.append(pollfd(fd: reply.socket.rawValue, events: Int16(POLLOUT), revents: 0))
            }
            for listener in listeners {
                let events = POLLIN | Self.readHangUp | (listener.backedUp ? POLLOUT : 0)
                fds.append(pollfd(fd: listener.fd, events: Int16(events), revents: 0))
            }
            let timeout = listeners.isEmpty && replies.isEmpty ? 1000 : Int32(Self.tick * 1000)
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 && errno != EINTR {
                note("poll", "\(label): time shift: poll: \(String(cString: strerror(errno)))")
            }
            if fds[0].revents != 0 { _ = try? service.wake.drain() }
            let now = monotonicNow()
            // The listeners polled, before arrivals change the list.
            var closing: [(TimeShiftListener, String, SessionEnd)] = []
            let first = 1 + replies.count
            for (position, listener) in listeners.enumerated() where fds.count > position + first {
                let revents = Int32(fds[position + first].revents)
                if revents & (POLLERR | POLLHUP | POLLNVAL) != 0 {
                    closing.append((listener, Self.closed(listener.fd), .left))
                } else if revents & (POLLIN | Self.readHangUp) != 0, let gone = drain(listener) {
                    closing.append((listener, gone, .left))
                }
            }
            for (listener, reason, end) in closing { disconnect(listener, reason: reason, ended: end, now: now) }
            for arrival in service.takeArrivals() { admit(arrival, now: now) }
            for id in service.takeKicks() {
                if let listener = listeners.first(where: { $0.entry.id == id }) {
                    disconnect(listener, reason: "closed by the admin (killclient)", ended: .kicked, now: now)
                }
            }
            serve(now: now)
            flushReplies(now: now)
        }
        for listener in listeners {
            disconnect(listener, reason: "server stopping", ended: .stopped, now: monotonicNow(), quiet: true)
        }
    }

    /// Reads ahead and writes every listener.
    private func serve(now: Double) {
        guard !listeners.isEmpty else { return }
        let index = service.index()
        var read = 0
        var ending: [(TimeShiftListener, String, SessionEnd)] = []
        for listener in listeners {
            if now >= listener.endsAt {
                ending.append((listener, "session limit", .sessionLimit))
                continue
            }
            if case .failed(let why) = listener.fill(
                now: now, index: index, directory: service.directory, scratch: &scratch, read: &read)
            {
                ending.append((listener, why, .left))
                continue
            }
            if let failure = listener.flush(now: now) {
                ending.append((listener, failure, .left))
            } else if listener.unsent > 0 && now - listener.lastProgress >= service.stuckAfter {
                ending.append((listener, "too slow: no byte taken for \(Int(service.stuckAfter)) s", .tooSlow))
            }
        }
        service.counters.bytesRead.add(read, ordering: .relaxed)
        for (listener, reason, end) in ending { disconnect(listener, reason: reason, ended: end, now: now) }
    }

    /// Why a connection whose poll said error or hang-up is over: the socket's pending error, when it has one.
    static func closed(_ fd: Int32) -> String {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error != 0 else { return "connection closed" }
        return "connection closed: \(String(cString: strerror(error)))"
    }

    /// Reads what a listener sent and drops it; why it is gone, when it is.
    private func drain(_ listener: TimeShiftListener) -> String? {
        let count = scratch.withUnsafeMutableBytes { recv(listener.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count == 0 { return "left" }
        if count < 0 {
            return errno == EAGAIN || errno == EINTR ? nil : "read failed: \(String(cString: strerror(errno)))"
        }
        listener.drained += count
        return listener.drained > 65_536 ? "sent too much" : nil
    }

    /// A line a storm could repeat: at most 10 in 10 s per topic.
    func note(_ topic: String, _ line: @autoclosure () -> String, priority: Log.Priority = .warning) {
        switch logLimit.admit(topic, now: monotonicNow()) {
        case .write: Log.write(priority, line())
        case .writeAfter(let suppressed): Log.write(priority, "\(line()) (and \(suppressed) more like it)")
        case .suppress: break
        }
    }
}

@available(*, unavailable) extension TimeShiftLoop: Sendable {}
