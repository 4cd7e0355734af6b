import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// What its pool loop hands an output's share: connections accepted on the output's listening socket (by its home
/// loop, directly or through a trusted balancer once their PROXY header named the client), pages published, and its
/// listeners' socket events. Pages published are written in `settle`, once per wake-up for all listeners.
extension NetworkLoop {
    /// With `proxy_protocol`, only the balancers of `proxy_from` reach the port, each connection with its header.
    package var expectedProxies: ExpectedProxies? {
        configuration.proxyProtocol ? ExpectedProxies(configuration.trustedProxies, setting: "proxy_from") : nil
    }

    /// A connection accepted here and assigned to this loop.
    package func accepted(_ socket: consuming FileDescriptor, peer: SocketAddress) {
        freshen()  // the newest pages, even if their wake-up is still queued
        admit(socket, peer: peer)  // an UNKNOWN header's balancer stands for the client it did not name
    }

    package func ready(_ fd: Int32, mask: UInt32) {
        guard fd >= 0, Int(fd) < byFD.count, let listener = byFD[Int(fd)] else { return }
        if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            disconnect(listener, reason: listener.readClosed ? "closed by listener" : "connection reset")
            return
        }
        if mask & EPOLLIN.rawValue != 0 && !listener.readClosed {
            guard readAndDiscard(listener) else { return }
        }
        if mask & EPOLLOUT.rawValue != 0 { flush(listener, now: monotonicNow()) }
    }

    /// A backed-up listener's recheck: its lag is judged (moved, dropped, or written as far as its socket takes),
    /// and while it stays backed up, the next recheck is set.
    package func expired(_ fd: Int32, now: Double) {
        guard fd >= 0, Int(fd) < byFD.count, let listener = byFD[Int(fd)] else { return }
        flush(listener, now: now)
        guard byFD[Int(fd)] === listener, listener.state.backedUp else { return }
        loop.deadlines.set(fd, schedule.recheck(listener.state, now: now, window: ring))
    }

    package func prepare(now: Double) -> Double? {
        refreshSettings()
        return nextDue
    }

    package func awake() {
        refreshSettings()  // a reload made while it slept applies to what this wake-up brings
        refreshedThisWake = false
        counters.loop.wakeups.add(1, ordering: .relaxed)
    }

    /// After the wake-up's events: if this output published since the view was taken, the new pages are written
    /// to every listener due; otherwise only a deferred flush that came due.
    package func settle() {
        if broadcaster.publications.load(ordering: .acquiring) != seenPublications { refresh() }
        if ring.head != scheduledHead {
            // Pages published while an accept batch ran were seen by the batch's refresh only: the listeners
            // already there are flushed now, not at their fallback deadline (up to twice the flush interval: stalls
            // of ~500 ms during every connect ramp, before this test).
            scheduledHead = ring.head
            flushDue()
        } else if let due = nextDue, monotonicNow() >= due {
            flushDue()
        }
    }
}
