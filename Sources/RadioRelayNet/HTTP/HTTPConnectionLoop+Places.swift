import RadioRelayMedia
import RadioRelaySystem

/// The places of an `HTTPConnectionLoop` (`register` applies them): unfinished heads counted per address — a full
/// address gives up its own oldest unfinished connection for a new one —, the oldest connection closed when every
/// place is taken, and each connection's deadline kept in the loop's `DeadlineHeap`.
extension HTTPConnectionLoop {
    /// Makes room for one more unfinished head from `host`: when the address has `maxPendingPerAddress` already,
    /// its own oldest unfinished connection is closed. So a client that holds idle connections (a leaky monitoring
    /// agent, a slowloris) only ever evicts itself, and a health check or an honest request from the same address
    /// (every client of a status endpoint on 127.0.0.1 has one address) is always read. Before it goes, the oldest is
    /// read once more (`readPending`, its owner's reading of a head): a request that came in the meantime is served
    /// rather than evicted, and the next oldest is looked at — at most `evictionLooks` of them per new connection.
    package func makePendingRoom(_ host: HostKey, now: Double) {
        guard maxPendingPerAddress > 0 else { return }
        for _ in 0..<Self.evictionLooks {
            guard let waiting = pendingPerHost[host], waiting.count >= maxPendingPerAddress, let oldest = waiting.first,
                let connection = connections[oldest]
            else { return }
            readPending?(connection)
            if connections[oldest] === connection && connection.pendingHost != nil {
                return evict(connection, now: now)
            }
        }
        guard let waiting = pendingPerHost[host], waiting.count >= maxPendingPerAddress, let oldest = waiting.first,
            let connection = connections[oldest]
        else { return }
        evict(connection, now: now)
    }

    /// How many of an address's oldest unfinished connections a new one looks at before one goes.
    package static let evictionLooks = 4

    private func evict(_ connection: HTTPConnection, now: Double) {
        logLimited(
            .refused, now: now,
            "\(label): \(connection.peer) closed early: \(maxPendingPerAddress) requests from its address unfinished "
                + "(its oldest goes)")
        close(connection)
    }

    /// Counts the connection as pending from its (current) peer's address, newest last.
    package func countPending(_ connection: HTTPConnection) {
        endPending(connection)
        connection.pendingHost = connection.hostKey
        pendingPerHost[connection.hostKey, default: []].append(connection.fd)
    }

    /// The connection's head is read, or it is gone: its address has one pending request fewer.
    package func endPending(_ connection: HTTPConnection) {
        guard let host = connection.pendingHost else { return }
        connection.pendingHost = nil
        guard var waiting = pendingPerHost[host] else { return }
        if let index = waiting.firstIndex(of: connection.fd) { waiting.remove(at: index) }
        pendingPerHost[host] = waiting.isEmpty ? nil : waiting
    }

    /// A kept connection whose next request began: its head counts as pending from its address from now on (its
    /// address's oldest unfinished connection gives way when the address is full), with the head deadline.
    package func wake(_ connection: HTTPConnection) {
        connection.idle = false
        idleSince.remove(connection.fd)
        let now = monotonicNow()
        makePendingRoom(connection.hostKey, now: now)
        countPending(connection)
        setDeadline(connection, min(connection.deadline, now + headerTimeout))
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
