import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Accepting connections on the public HTTP address: in bounded batches; the places and per-address limits are
/// `HTTPConnectionLoop.register`'s.
extension HTTPFrontLoop {
    package func acceptBatch() {
        for _ in 0..<Self.acceptBatch {
            guard let (fd, peer) = acceptOne() else { return }
            let socket = FileDescriptor(owning: fd)
            let proxied = front.proxyProtocol.load(ordering: .relaxed)
            // Read for each connection, not once per batch: a reload that returned before the connection was made
            // applies to it, even when the batch that accepts it began earlier (it did not, and a client refused a
            // moment before came back refused again).
            let trustedProxies = proxied ? front.trustedProxies : .loopback
            if proxied && !trustedProxies.trusts(peer) {
                // Its PROXY header would not be believed: only the balancers (`http_proxy_from`) reach this address.
                front.proxyRejected.add(1, ordering: .relaxed)
                logLimited(
                    .proxyHeader, now: monotonicNow(),
                    "http: connection from \(peer) closed: not a trusted proxy (http_proxy_from: \(trustedProxies))")
                continue  // the socket closes here
            }
            // A balancer's connection counts against the client's address once its header names it.
            guard let connection = register(socket, peer: peer, countsPeer: !proxied) else { continue }
            if proxied {
                // First its PROXY header, within the header wait's allowance (or the request's, if shorter).
                connection.proxyHeader = ProxyHeaderReader()
                setDeadline(connection, min(connection.deadline, monotonicNow() + ProxyHeaderReader.allowance))
            }
            // The request often arrives with the connection: read it now rather than after another wake-up.
            handleRequest(connection, mask: 0)
        }
    }
}
