import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// A connection accepted on a port behind a load balancer (`proxy_protocol = yes`), waiting for its PROXY header
/// before it is admitted. Confined to the network thread; it owns its socket until the header is read.
package final class AwaitingProxyHeader {
    private var socket: FileDescriptor?
    package let fd: Int32
    /// The connection's own peer: the balancer.
    package let peer: SocketAddress
    package var reader = ProxyHeaderReader()

    package init(socket: consuming FileDescriptor, peer: SocketAddress) {
        fd = socket.rawValue
        self.socket = consume socket
        self.peer = peer
    }

    /// Hands the socket on (once); otherwise it closes with this value.
    package func takeSocket() -> FileDescriptor? { socket.take() }
}

@available(*, unavailable) extension AwaitingProxyHeader: Sendable {}

/// The PROXY protocol on a station's port: an accepted connection first waits (bounded in number and time, see
/// `ProxyHeaderWait`) for its header, then is admitted as coming from the header's source address, so per-address
/// limits, the access log and status see the real client. A LOCAL header (the balancer's health check) is closed
/// once read: a raw port has nothing to answer it. Without the setting none of this runs.
extension NetworkLoop {
    /// Takes a fresh connection when the station expects a PROXY header: it waits for it, read at once if it came
    /// with the connection (as a balancer sends it).
    package func awaitProxyHeader(_ socket: consuming FileDescriptor, peer: SocketAddress) {
        let fd = socket.rawValue
        let waiting = AwaitingProxyHeader(socket: socket, peer: peer)
        let now = monotonicNow()
        guard configuration.trustedProxies.trusts(peer) else {
            // Whatever it would send, its header is not believed: only the balancers (`proxy_from`) reach this port.
            refuseProxied(waiting, "not a trusted proxy (proxy_from: \(configuration.trustedProxies))", now: now)
            return
        }
        guard awaitingProxy.enter(fd, waiting, now: now) else {
            refuseProxied(
                waiting, "\(awaitingProxy.capacity) connections wait for their PROXY header already", now: now)
            return
        }
        do {
            try epoll.add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(fd))
        } catch {
            awaitingProxy.leave(fd)
            logLimited(.socketTrouble, .warning, now: now, "\(name): connection from \(peer) not served: \(error)")
            return
        }
        readProxyHeader(fd)
    }

    /// Reads what has come of a waiting connection's header (an epoll event with a tag no listener has); admits it
    /// once the header is whole.
    package func readProxyHeader(_ fd: Int32) {
        guard let waiting = awaitingProxy[fd] else { return }
        let step = waiting.reader.step(fd, scratch: &scratch)
        guard step != .waiting else { return }
        awaitingProxy.leave(fd)
        let now = monotonicNow()
        guard case .done(let result) = step else {
            if case .failed(let reason) = step { refuseProxied(waiting, reason, now: now) }
            return
        }
        do {
            try epoll.remove(fd)  // admit registers it again, as a listener
        } catch {
            logLimited(.socketTrouble, .warning, now: now, "\(name): connection from \(waiting.peer): \(error)")
            return
        }
        guard let socket = waiting.takeSocket() else { return }
        switch result {
        case .proxied(let source, _, _):
            admit(socket, peer: source.socketAddress)
        case .unknown:
            admit(socket, peer: waiting.peer)  // relayed, with no IP source given: the balancer stands for it
        case .local, .incomplete, .invalid:
            // The balancer's own connection (a health check of this port): it has its answer, the close.
            if Log.isEnabled(.debug) { Log.debug("\(name): PROXY LOCAL connection from \(waiting.peer) closed") }
        }
    }

    /// Closes the connections whose header is late (`ProxyHeaderReader.allowance` after their accept);
    /// returns when the next one is due, for the loop's sleep.
    package func expireProxyWaits(now: Double) -> Double? {
        guard !awaitingProxy.isEmpty else { return nil }
        for waiting in awaitingProxy.expire(now: now) {
            refuseProxied(waiting, "no PROXY header within \(wholeSeconds(awaitingProxy.timeout)) s", now: now)
        }
        return awaitingProxy.nextDeadline
    }

    /// Counts and logs (rate-limited) a connection closed for its PROXY header; its socket closes with `waiting`.
    private func refuseProxied(_ waiting: AwaitingProxyHeader, _ reason: String, now: Double) {
        counters.proxyRejected.add(1, ordering: .relaxed)
        logLimited(.proxyHeader, .notice, now: now, "\(name): connection from \(waiting.peer) closed: \(reason)")
    }
}
