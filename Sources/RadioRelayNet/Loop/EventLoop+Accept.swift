import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// Accepting: the listening sockets a loop accepts on, bounded batches, and the back-off's pause when descriptors or
/// memory run out (every listening socket unwatched for the pause, then watched again).
extension EventLoop {
    /// Accepts on `fd` too (watched now unless accepting is paused).
    package func addListening(_ fd: Int32) throws(SystemError) {
        guard fd >= 0, !listening.contains(fd) else { return }
        try epoll.add(fd, events: listenWatched ? EPOLLIN.rawValue : 0, tag: Self.listeningBit | UInt64(fd))
        listening.append(fd)
    }

    /// Stops accepting on `fd` (its owner closes it); connections in the arrival stage from it stay.
    package func removeListening(_ fd: Int32) {
        guard let index = listening.firstIndex(of: fd) else { return }
        listening.remove(at: index)
        do {
            try epoll.remove(fd)
        } catch {
            logLimited(.socketTrouble, .warning, now: monotonicNow(), "\(label): listening socket: \(error)")
        }
    }

    /// Accepts up to `acceptBatch` connections. More waiting ones keep the (level-triggered) listening socket ready,
    /// so the next wake-up comes at once, after the connections already there have been served.
    func accept(_ listenFD: Int32, _ handler: some EventLoopHandler) {
        for _ in 0..<acceptBatch {
            guard let (fd, peer) = acceptOne(listenFD) else { return }
            let socket = FileDescriptor(owning: fd)
            if let arrivals, arrivals.wants(listenFD) {
                arrivals.take(socket, peer: peer, on: listenFD, loop: self, handler)
            } else {
                handler.accepted(socket, peer: peer, via: .direct, on: listenFD)
            }
        }
    }

    /// One connection from the backlog, or nil when there is none now, or when accepting failed for want of
    /// descriptors or memory (then the listening socket is left unwatched for the back-off's pause, and the failure
    /// reported once per interval, with a count).
    private func acceptOne(_ listenFD: Int32) -> (fd: Int32, peer: SocketAddress)? {
        while true {
            var storage = sockaddr_storage()
            var length = UInt32(MemoryLayout<sockaddr_storage>.size)
            let accepted: IOResult<Int32>
            do {
                accepted = try nonblockingSyscall("accept4") {
                    withUnsafeMutablePointer(to: &storage) { rr_accept4(listenFD, $0, &length) }
                }
            } catch {
                switch error.errno {
                case ECONNABORTED, EPROTO, EPERM:
                    continue  // that connection failed, not the socket
                default:
                    // EMFILE, ENFILE, ENOBUFS, ENOMEM; anything else is unexpected, and pausing keeps a persistent
                    // failure from spinning as well.
                    pauseAccepting(error)
                    return nil
                }
            }
            guard case .done(let fd) = accepted else { return nil }
            backoff.accepted()
            return (fd, SocketAddress(storage: storage, length: length))
        }
    }

    /// Stops watching the listening socket for the back-off's pause and reports the failure (once per interval,
    /// with a count). Waiting connections stay in the backlog until it is watched again.
    private func pauseAccepting(_ error: SystemError) {
        let failure = backoff.failed(now: monotonicNow())
        watchListenSocket(false)
        guard let count = failure.report else { return }
        let times = count == 1 ? "" : " (\(count) times since the last report)"
        let advice =
            error.errno == EMFILE || error.errno == ENFILE ? "; raise LimitNOFILE or lower --max-listeners" : ""
        Log.error("\(label): cannot accept: \(error)\(times); not accepting for \(failure.pause) s\(advice)")
    }

    /// Watches the listening sockets again (`true`), or stops watching them (`false`, events 0: they stay
    /// registered). If epoll refuses, that socket is left as it was and the next attempt comes with the next pause.
    func watchListenSocket(_ watched: Bool) {
        guard watched != listenWatched else { return }
        listenWatched = watched
        for fd in listening {
            do {
                try epoll.modify(fd, events: watched ? EPOLLIN.rawValue : 0, tag: Self.listeningBit | UInt64(fd))
            } catch {
                logLimited(.socketTrouble, .warning, now: monotonicNow(), "\(label): listening socket: \(error)")
            }
        }
    }
}
