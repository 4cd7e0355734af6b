import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// What the event-loop skeleton hands a station's network loop: connections (accepted, or through a trusted
/// balancer once their PROXY header named the client), its two wake-ups — pages published, HTTP listeners arrived —
/// and its listeners' socket events. Pages published are written in `settle`, once per wake-up for all listeners.
extension NetworkLoop: EventLoopHandler {
    /// With `proxy_protocol`, only the balancers of `proxy_from` reach the port, each connection with its header.
    package var expectedProxies: ExpectedProxies? {
        configuration.proxyProtocol ? ExpectedProxies(configuration.trustedProxies, setting: "proxy_from") : nil
    }

    package func accepted(_ socket: consuming FileDescriptor, peer: SocketAddress, via: ArrivalPath) {
        if case .local = via {
            // The balancer's own connection (a health check of this port): it has its answer, the close.
            if Log.isEnabled(.debug) { Log.debug("\(name): PROXY LOCAL connection from \(peer) closed") }
            return
        }
        if !refreshedThisWake {
            refresh()  // the newest pages, even if their wake-up is still queued
            refreshedThisWake = true
        }
        admit(socket, peer: peer)  // an UNKNOWN header's balancer stands for the client it did not name
    }

    package func refusedProxied(peer: SocketAddress) {
        counters.proxyRejected.add(1, ordering: .relaxed)
    }

    package func woken(_ source: Int) {
        if source == Self.arrivedSource {
            admitArrivals()
        } else {
            published = true
        }
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
    }

    package func settle() {
        if published || ring.head != scheduledHead {
            // Without the second test, pages published while an accept batch ran were seen by the batch's refresh
            // only, and the listeners already there waited for their fallback deadline (up to twice the flush
            // interval: stalls of ~500 ms during every connect ramp).
            published = false
            refresh()
            scheduledHead = ring.head
            flushDue()
        } else if let due = nextDue, monotonicNow() >= due {
            flushDue()
        }
    }
}
