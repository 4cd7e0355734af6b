import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// Accepting connections: in bounded batches, and with a pause instead of a spin when descriptors or memory run out.
extension NetworkLoop {
    /// Accepts up to `acceptBatch` connections. More waiting ones keep the (level-triggered) listening socket ready,
    /// so the next wake-up comes at once, after the listeners already connected have been served.
    package func acceptBatch() {
        var refreshed = false
        for _ in 0..<Self.acceptBatch {
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
                    return
                }
            }
            guard case .done(let fd) = accepted else { return }
            backoff.accepted()
            if !refreshed {
                refresh()  // the newest pages, even if their wake-up is still queued
                refreshed = true
            }
            let peer = SocketAddress(storage: storage, length: length)
            if configuration.proxyProtocol {
                awaitProxyHeader(FileDescriptor(owning: fd), peer: peer)
            } else {
                admit(FileDescriptor(owning: fd), peer: peer)
            }
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
        Log.error("\(name): cannot accept: \(error)\(times); not accepting for \(failure.pause) s\(advice)")
    }

    /// Watches the listening socket again (`true`), or stops watching it (`false`, events 0: it stays registered).
    /// If epoll refuses, the socket is left as it was and the next attempt comes with the next pause.
    package func watchListenSocket(_ watched: Bool) {
        guard watched != listenWatched else { return }
        do {
            try epoll.modify(listenFD, events: watched ? EPOLLIN.rawValue : 0, tag: Self.listenTag)
            listenWatched = watched
        } catch {
            logLimited(.socketTrouble, .warning, now: monotonicNow(), "\(name): listening socket: \(error)")
        }
    }
}
