import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// What epoll reports for each listener.
extension NetworkLoop {
    /// Arms `EPOLLOUT` only while the socket is backed up. If epoll refuses, the listener could not be woken when
    /// its socket drains, so it is disconnected rather than left stalled.
    /// A backed-up listener leaves the list that publications look at: it is flushed when its socket drains, or
    /// looked at when the schedule's `recheck` says its lag crosses a line.
    package func setBackedUp(_ listener: Listener, _ backedUp: Bool) {
        guard listener.state.backedUp != backedUp else { return }
        listener.state.backedUp = backedUp
        if backedUp {
            leaveScan(listener)
            loop.deadlines.set(listener.fd, schedule.recheck(listener.state, now: monotonicNow(), window: ring))
        } else {
            loop.deadlines.remove(listener.fd)
            enterScan(listener)
        }
        watch(listener)
    }

    /// Puts the listener in the list publications look at.
    package func enterScan(_ listener: Listener) {
        guard listener.scanIndex < 0 else { return }
        listener.scanIndex = scan.count
        scan.append(listener)
    }

    /// Takes the listener out of that list (swap-remove).
    package func leaveScan(_ listener: Listener) {
        let index = listener.scanIndex
        guard index >= 0, index < scan.count, scan[index] === listener else { return }
        let last = scan.removeLast()
        if last !== listener {
            scan[index] = last
            last.scanIndex = index
        }
        listener.scanIndex = -1
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
