import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The PROXY protocol on the public HTTP address (`http_proxy_protocol = yes`): each connection's header is read
/// first, exactly (the request that follows stays in the socket for `readHead`), and the connection then counts as
/// coming from the header's source — for the hand-over to a station (its per-address limit and access log), event
/// subscribers' per-address limit, and log lines. A LOCAL header (the balancer's own connection) leaves the peer as
/// it is, and its request is answered like any other. A missing, invalid or late header closes the connection.
extension HTTPFrontLoop {
    /// Reads what has come of the connection's header; true once it is read (the request may follow), false while
    /// it is incomplete or when the connection was closed for it.
    package func readProxyHeader(_ connection: HTTPConnection) -> Bool {
        guard var reader = connection.proxyHeader else { return true }
        let step = reader.step(connection.fd, scratch: &scratch)
        connection.proxyHeader = reader
        switch step {
        case .waiting:
            return false
        case .failed(let reason):
            connection.proxyHeader = nil
            refuseProxied(connection, reason)
            return false
        case .done(let result):
            connection.proxyHeader = nil
            if case .proxied(let source, _, _) = result { connection.peer = source.socketAddress }
            let now = monotonicNow()
            guard hasPendingRoom(connection.hostKey) else {
                refuseOverAddressLimit(connection.fd, peer: connection.peer, now: now)
                close(connection)
                return false
            }
            countPending(connection)
            setDeadline(connection, now + headerTimeout)  // now the request's own allowance
            return true
        }
    }

    package func refuseProxied(_ connection: HTTPConnection, _ reason: String) {
        front.proxyRejected.add(1, ordering: .relaxed)
        logLimited(.proxyHeader, now: monotonicNow(), "http: connection from \(connection.peer) closed: \(reason)")
        close(connection)
    }
}
