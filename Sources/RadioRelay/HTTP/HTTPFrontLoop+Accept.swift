import Synchronization

/// Accepting connections on the public HTTP address: in bounded batches, and a 503 at once beyond `maxPending`
/// connections still sending requests.
extension HTTPFrontLoop {
    func acceptBatch() {
        let trustedProxies = front.trustedProxies
        for _ in 0..<Self.acceptBatch {
            guard let (fd, peer) = acceptOne() else { return }
            let socket = FileDescriptor(owning: fd)
            let pending = connections.count - subscribers.values.reduce(0, +)
            if pending >= limits.maxPending {
                Self.sendBestEffort(PublicRouter.text(503, "too many connections\n").encoded, on: fd)
                logLimited(.refused, now: monotonicNow(), "http: \(peer) refused: \(pending) requests pending")
                continue  // the socket closes here
            }
            let proxied = front.proxyProtocol.load(ordering: .relaxed)
            if proxied && !trustedProxies.trusts(peer) {
                // Its PROXY header would not be believed: only the balancers (`http_proxy_from`) reach this address.
                front.proxyRejected.add(1, ordering: .relaxed)
                logLimited(
                    .proxyHeader, now: monotonicNow(),
                    "http: connection from \(peer) closed: not a trusted proxy (http_proxy_from: \(trustedProxies))")
                continue  // the socket closes here
            }
            guard let connection = register(socket, peer: peer) else { continue }
            if proxied {
                // First its PROXY header, within the header wait's allowance (or the request's, if shorter).
                connection.proxyHeader = ProxyHeaderReader()
                connection.deadline = min(connection.deadline, monotonicNow() + ProxyHeaderReader.allowance)
            }
            // The request often arrives with the connection: read it now rather than after another wake-up.
            handleRequest(connection, mask: 0)
        }
    }
}
