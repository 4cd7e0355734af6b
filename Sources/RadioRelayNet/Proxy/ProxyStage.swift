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

/// The balancers a listening socket behind a load balancer believes, and the setting that names them (for the log).
package struct ExpectedProxies: Sendable {
    package var trusted: TrustedProxies
    package var setting: String

    package init(_ trusted: TrustedProxies, setting: String) {
        self.trusted = trusted
        self.setting = setting
    }
}

/// The PROXY protocol as a stage an `EventLoop` is given (a station's `proxy_protocol`, the HTTP address's
/// `http_proxy_protocol`): an accepted connection on a listening socket behind balancers first waits here — bounded
/// in number and time, see `ProxyHeaderWait` — for its header, read exactly (what follows stays in the socket),
/// then is handed to the loop's handler as coming from the header's source (`ArrivalPath.proxied`), so per-address
/// limits, the access log and status see the real client. A connection from anywhere else, or with a missing,
/// invalid or late header, is closed, counted (`refused`) and logged within the loop's rate limit.
package final class ProxyStage: ArrivalStage {
    private var wait: ProxyHeaderWait<Int32, AwaitingProxyHeader>
    /// The balancers a listening socket expects, asked for each connection (a reload applies to the next one); nil:
    /// that socket takes connections straight from clients.
    private let expected: (Int32) -> ExpectedProxies?
    /// Told of each connection closed for its header (the owner counts it).
    private let refused: (SocketAddress, Int32) -> Void
    private var pending: ExpectedProxies?

    package init(
        capacity: Int, expected: @escaping (Int32) -> ExpectedProxies?,
        refused: @escaping (SocketAddress, Int32) -> Void
    ) {
        wait = ProxyHeaderWait(capacity: max(1, capacity))
        self.expected = expected
        self.refused = refused
    }

    package var isEmpty: Bool { wait.isEmpty }
    package var nextDeadline: Double? { wait.nextDeadline }
    package func holds(_ fd: Int32) -> Bool { wait[fd] != nil }

    package func wants(_ listening: Int32) -> Bool {
        pending = expected(listening)
        return pending != nil
    }

    /// Takes a fresh connection (after `wants` said yes): it waits for its header, read at once if it came with the
    /// connection (as a balancer sends it).
    package func take(
        _ socket: consuming FileDescriptor, peer: SocketAddress, on listening: Int32, loop: EventLoop,
        _ handler: some EventLoopHandler
    ) {
        let fd = socket.rawValue
        let waiting = AwaitingProxyHeader(socket: socket, peer: peer, on: listening)
        let now = monotonicNow()
        guard let proxies = pending ?? expected(listening) else { return }
        guard proxies.trusted.trusts(peer) else {
            // Whatever it would send, its header is not believed: only the balancers reach this port.
            refuse(waiting, "not a trusted proxy (\(proxies.setting): \(proxies.trusted))", now: now, loop: loop)
            return
        }
        guard wait.enter(fd, waiting, now: now) else {
            refuse(waiting, "\(wait.capacity) connections wait for their PROXY header already", now: now, loop: loop)
            return
        }
        do {
            try loop.epoll.add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(fd))
        } catch {
            wait.leave(fd)
            loop.logLimited(
                .socketTrouble, .warning, now: now, "\(loop.label): connection from \(peer) not served: \(error)")
            return
        }
        ready(fd, loop: loop, handler)
    }

    /// Reads what has come of a waiting connection's header; hands the connection over once the header is whole.
    package func ready(_ fd: Int32, loop: EventLoop, _ handler: some EventLoopHandler) {
        guard let waiting = wait[fd] else { return }
        let step = waiting.reader.step(fd, scratch: &loop.scratch)
        guard step != .waiting else { return }
        wait.leave(fd)
        let now = monotonicNow()
        guard case .done(let result) = step else {
            if case .failed(let reason) = step { refuse(waiting, reason, now: now, loop: loop) }
            return
        }
        do {
            try loop.epoll.remove(fd)  // the handler registers it again as its own
        } catch {
            loop.logLimited(
                .socketTrouble, .warning, now: now, "\(loop.label): connection from \(waiting.peer): \(error)")
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
    package func expire(now: Double, loop: EventLoop) {
        for waiting in wait.expire(now: now) {
            refuse(waiting, "no PROXY header within \(wholeSeconds(wait.timeout)) s", now: now, loop: loop)
        }
    }

    /// Counts and logs (rate-limited) a connection closed for its PROXY header; its socket closes with `waiting`.
    private func refuse(_ waiting: AwaitingProxyHeader, _ reason: String, now: Double, loop: EventLoop) {
        refused(waiting.peer, waiting.listening)
        loop.logLimited(
            .proxyHeader, .notice, now: now, "\(loop.label): connection from \(waiting.peer) closed: \(reason)")
    }
}

@available(*, unavailable) extension ProxyStage: Sendable {}
