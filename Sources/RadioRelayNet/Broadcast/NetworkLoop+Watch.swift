import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// What epoll reports for each listener.
extension NetworkLoop {
    /// Arms `EPOLLOUT` only while the socket is backed up. If epoll refuses, the listener could not be woken when
    /// its socket drains, so it is disconnected rather than left stalled.
    package func setBackedUp(_ listener: Listener, _ backedUp: Bool) {
        guard listener.state.backedUp != backedUp else { return }
        listener.state.backedUp = backedUp
        watch(listener)
    }

    /// Tells epoll what to report for a listener: its input until it shuts its side down, its socket draining while
    /// it is backed up (errors and hang-ups always).
    package func watch(_ listener: Listener) {
        let input = listener.readClosed ? 0 : EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        let mask = input | (listener.state.backedUp ? EPOLLOUT.rawValue : 0)
        do {
            try loop.epoll.modify(listener.fd, events: mask, tag: UInt64(listener.fd))
        } catch {
            Log.warning("\(name): listener \(listener.peer): \(error)")
            disconnect(listener, reason: "cannot watch its socket")
        }
    }
}
