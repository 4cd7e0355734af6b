import RadioRelayMedia
import RadioRelaySystem

/// The places of an `HTTPConnectionLoop` (`register` applies them): unfinished heads counted per address, the oldest
/// connection closed when every place is taken, and each connection's deadline kept in the loop's `DeadlineHeap`.
extension HTTPConnectionLoop {
    /// Whether one more connection from `host` may send its head.
    package func hasPendingRoom(_ host: HostKey) -> Bool {
        maxPendingPerAddress == 0 || pendingPerHost[host, default: 0] < maxPendingPerAddress
    }

    /// Counts the connection as pending from its (current) peer's address.
    package func countPending(_ connection: HTTPConnection) {
        endPending(connection)
        connection.pendingHost = connection.hostKey
        pendingPerHost[connection.hostKey, default: 0] += 1
    }

    /// The connection's head is read, or it is gone: its address has one pending request fewer.
    package func endPending(_ connection: HTTPConnection) {
        guard let host = connection.pendingHost else { return }
        connection.pendingHost = nil
        let left = pendingPerHost[host, default: 1] - 1
        pendingPerHost[host] = left > 0 ? left : nil
    }

    /// 503 and close for a connection whose address has `maxPendingPerAddress` requests pending.
    package func refuseOverAddressLimit(_ fd: Int32, peer: SocketAddress, now: Double) {
        Self.sendBestEffort(HTTPResponse.text(503, "too many pending requests from your address\n").encoded, on: fd)
        logLimited(
            .refused, now: now,
            "\(label): \(peer) refused: \(maxPendingPerAddress) requests from its address pending already")
    }

    /// A kept connection whose next request began: its head counts as pending from its address from now on, with
    /// the head deadline; false when its address has too many pending (503, closed).
    package func wake(_ connection: HTTPConnection) -> Bool {
        connection.idle = false
        idleSince.remove(connection.fd)
        guard hasPendingRoom(connection.hostKey) else {
            refuseOverAddressLimit(connection.fd, peer: connection.peer, now: monotonicNow())
            close(connection)
            return false
        }
        countPending(connection)
        setDeadline(connection, min(connection.deadline, monotonicNow() + headerTimeout))
        return true
    }

    /// Closes a kept connection waiting for its next request (the longest waiting), or else the connection due
    /// soonest (the oldest in its phase), to make room: every place is taken.
    package func evictOldest(now: Double) {
        if let (fd, _) = idleSince.first(), let connection = connections[fd] {
            return close(connection)
        }
        guard let (fd, _) = loop.deadlines.first(), let connection = connections[fd] else { return }
        logLimited(
            .refused, now: now,
            "\(label): \(connection.peer) closed early: \(maxOpen) connections open (the oldest goes)")
        close(connection)
    }

    /// Sets the connection's deadline for its current phase.
    package func setDeadline(_ connection: HTTPConnection, _ deadline: Double) {
        connection.deadline = deadline
        loop.deadlines.set(connection.fd, deadline)
    }
}
