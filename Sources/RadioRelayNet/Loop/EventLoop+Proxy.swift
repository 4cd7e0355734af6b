import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// A connection accepted on a listening socket behind a load balancer, waiting for its PROXY header before it is
/// handed to the loop's handler. Confined to the loop's thread; it owns its socket until the header is read.
package final class AwaitingProxyHeader {
    private var socket: FileDescriptor?
    package let fd: Int32
    /// The connection's own peer: the balancer.
    package let peer: SocketAddress
    /// The listening socket it came through.
    package let listening: Int32
    package var reader = ProxyHeaderReader()

    package init(socket: consuming FileDescriptor, peer: SocketAddress, on listening: Int32 = -1) {
        fd = socket.rawValue
        self.socket = consume socket
        self.peer = peer
        self.listening = listening
    }

    /// Hands the socket on (once); otherwise it closes with this value.
    package func takeSocket() -> FileDescriptor? { socket.take() }
}

@available(*, unavailable) extension AwaitingProxyHeader: Sendable {}

/// The PROXY protocol on a listening socket behind balancers (a station's `proxy_protocol`, the HTTP address's
/// `http_proxy_protocol`): an accepted connection from a trusted balancer first waits — bounded in number and time,
/// see `ProxyHeaderWait` — for its header, read exactly (what follows stays in the socket), then is handed to the
/// handler as coming from the header's source, so per-address limits, the access log and status see the real
/// client. A connection from anywhere else, or with a missing, invalid or late header, is closed and counted.
extension EventLoop {
    /// Takes a fresh connection when the socket expects a PROXY header: it waits for it, read at once if it came
    /// with the connection (as a balancer sends it).
    func awaitProxyHeader(
        _ socket: consuming FileDescriptor, peer: SocketAddress, proxies: ExpectedProxies, on listening: Int32,
        _ handler: some EventLoopHandler
    ) {
        let fd = socket.rawValue
        let waiting = AwaitingProxyHeader(socket: socket, peer: peer, on: listening)
        let now = monotonicNow()
        guard proxies.trusted.trusts(peer) else {
            // Whatever it would send, its header is not believed: only the balancers reach this port.
            refuse(waiting, "not a trusted proxy (\(proxies.setting): \(proxies.trusted))", now: now, handler)
            return
        }
        guard proxyWait.enter(fd, waiting, now: now) else {
            refuse(waiting, "\(proxyWait.capacity) connections wait for their PROXY header already", now: now, handler)
            return
        }
        do {
            try epoll.add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(fd))
        } catch {
            proxyWait.leave(fd)
            logLimited(.socketTrouble, .warning, now: now, "\(label): connection from \(peer) not served: \(error)")
            return
        }
        readProxyHeader(fd, handler)
    }

    /// Reads what has come of a waiting connection's header; hands the connection over once the header is whole.
    func readProxyHeader(_ fd: Int32, _ handler: some EventLoopHandler) {
        guard let waiting = proxyWait[fd] else { return }
        let step = waiting.reader.step(fd, scratch: &scratch)
        guard step != .waiting else { return }
        proxyWait.leave(fd)
        let now = monotonicNow()
        guard case .done(let result) = step else {
            if case .failed(let reason) = step { refuse(waiting, reason, now: now, handler) }
            return
        }
        do {
            try epoll.remove(fd)  // the handler registers it again as its own
        } catch {
            logLimited(.socketTrouble, .warning, now: now, "\(label): connection from \(waiting.peer): \(error)")
            return
        }
        guard let socket = waiting.takeSocket() else { return }
        switch result {
        case .proxied(let source, _, _):
            handler.accepted(
                socket, peer: source.socketAddress, via: .proxied(balancer: waiting.peer), on: waiting.listening)
        case .unknown:
            handler.accepted(socket, peer: waiting.peer, via: .unnamed, on: waiting.listening)
        case .local:
            handler.accepted(socket, peer: waiting.peer, via: .local, on: waiting.listening)
        case .incomplete, .invalid:
            return  // not a step's `.done`
        }
    }

    /// Closes the connections whose header is late (`ProxyHeaderReader.allowance` after their accept).
    func expireProxyWaits(now: Double, _ handler: some EventLoopHandler) {
        for waiting in proxyWait.expire(now: now) {
            refuse(waiting, "no PROXY header within \(wholeSeconds(proxyWait.timeout)) s", now: now, handler)
        }
    }

    /// Counts and logs (rate-limited) a connection closed for its PROXY header; its socket closes with `waiting`.
    private func refuse(
        _ waiting: AwaitingProxyHeader, _ reason: String, now: Double, _ handler: some EventLoopHandler
    ) {
        handler.refusedProxied(peer: waiting.peer, on: waiting.listening)
        logLimited(.proxyHeader, .notice, now: now, "\(label): connection from \(waiting.peer) closed: \(reason)")
    }
}
