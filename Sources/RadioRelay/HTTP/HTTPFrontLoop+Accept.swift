import CLinux
import Glibc

/// Accepting connections on the public HTTP address: in bounded batches, with a pause instead of a spin when
/// descriptors or memory run out, and a 503 at once beyond `maxPending` connections still sending requests.
extension HTTPFrontLoop {
    func acceptBatch() {
        let busy = PublicRouter.text(503, "too many connections\n").encoded
        for _ in 0..<Self.acceptBatch {
            var storage = sockaddr_storage()
            var length = UInt32(MemoryLayout<sockaddr_storage>.size)
            let accepted: IOResult<Int32>
            do {
                accepted = try nonblockingSyscall("accept4") {
                    withUnsafeMutablePointer(to: &storage) { rr_accept4(front.listenSocket.rawValue, $0, &length) }
                }
            } catch {
                if error.errno == ECONNABORTED || error.errno == EPROTO || error.errno == EPERM { continue }
                // Out of descriptors or memory: stop watching the (level-triggered) socket for a pause.
                let failure = backoff.failed(now: monotonicNow())
                watchListenSocket(false)
                if let times = failure.report {
                    Log.error("http: cannot accept: \(error) (\(times) times); pausing \(failure.pause) s")
                }
                return
            }
            guard case .done(let fd) = accepted else { return }
            backoff.accepted()
            let socket = FileDescriptor(owning: fd)
            let peer = SocketAddress(storage: storage, length: length)
            let pending = connections.count - subscribers.values.reduce(0, +)
            if pending >= limits.maxPending {
                NetworkLoop.sendBestEffort(busy, on: fd)
                logLimited(.refused, now: monotonicNow(), "http: \(peer) refused: \(pending) requests pending")
                continue  // the socket closes here
            }
            do {
                try epoll.add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(fd))
            } catch {
                logLimited(.socketTrouble, now: monotonicNow(), "http: \(peer) not served: \(error)")
                continue
            }
            let connection = FrontConnection(
                socket: socket, peer: peer, deadline: monotonicNow() + limits.headerTimeout)
            connections[fd] = connection
            // The request often arrives with the connection: read it now rather than after another wake-up.
            readHead(connection, mask: 0)
        }
    }

    /// Watches the listening socket again (`true`), or stops watching it (`false`; it stays registered).
    func watchListenSocket(_ watched: Bool) {
        guard watched != listenWatched else { return }
        do {
            try epoll.modify(front.listenSocket.rawValue, events: watched ? EPOLLIN.rawValue : 0, tag: Self.listenTag)
            listenWatched = watched
        } catch {
            logLimited(.socketTrouble, now: monotonicNow(), "http: listening socket: \(error)")
        }
    }
}
