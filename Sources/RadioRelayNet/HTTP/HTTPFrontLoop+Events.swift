import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Title event streams (`/NAME/events`): subscribers count against their station's listener limits and the
/// server's listener places, are written only when the `EventStream` says so, and are closed when they leave more
/// than `maxEventBacklog` bytes unread.
extension HTTPFrontLoop {
    package func subscribe(
        _ connection: HTTPConnection, to mount: PublicDirectory.Mount, broadcaster: Broadcaster, head: [UInt8]
    ) {
        let limits = broadcaster.configuration
        let path = mount.path
        let count = subscribers[path, default: 0]
        let fromHost = subscribersPerHost[path]?[connection.hostKey] ?? 0
        var refusal: String?
        if limits.maxListeners > 0
            && broadcaster.counters.listeners.load(ordering: .relaxed) + count >= limits.maxListeners
        {
            refusal = "station full (\(limits.maxListeners) listeners and subscribers)"
        } else if limits.maxPerIP > 0 && fromHost >= limits.maxPerIP {
            refusal = "too many event streams from \(NetworkLoop.clientName(connection.peer))"
        } else if !front.budget.acquire() {
            refusal = "server full (the open-files limit)"
        }
        if let refusal {
            logLimited(.refused, now: monotonicNow(), "http: events \(connection.peer) refused: \(refusal)")
            return respond(connection, PublicRouter.text(503, refusal + "\n").encoded)
        }
        do {
            try epoll.modify(connection.fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(connection.fd))
        } catch {
            front.budget.release()
            return close(connection)
        }
        subscribers[path] = count + 1
        eventConnections[connection.fd] = connection
        subscribersPerHost[path, default: [:]][connection.hostKey, default: 0] += 1
        connection.phase = .events(mount: path)
        untime(connection)  // it lasts; its places are the station's
        let now = monotonicNow()
        var events = EventStream(now: now)
        connection.output = head + events.output(title: mount.title, now: now)
        connection.events = events
        Log.info("http: events \(connection.peer) subscribed to \(path)")
        flushEvents(connection)
    }

    /// Forgets a subscriber's counts and place (its connection is already gone from the table).
    package func unsubscribe(_ connection: HTTPConnection, from path: String) {
        front.budget.release()
        eventConnections[connection.fd] = nil
        subscribers[path, default: 1] -= 1
        if subscribers[path] == 0 { subscribers[path] = nil }
        subscribersPerHost[path, default: [:]][connection.hostKey, default: 1] -= 1
        if subscribersPerHost[path]?[connection.hostKey] == 0 { subscribersPerHost[path]?[connection.hostKey] = nil }
        if subscribersPerHost[path]?.isEmpty == true { subscribersPerHost[path] = nil }
        Log.info("http: events \(connection.peer) left \(path)")
    }

    /// Gives each subscriber what its `EventStream` says is due: a changed title, or a keep-alive. A subscriber
    /// whose mount went away (a reload) is closed.
    package func sendEvents(now: Double) {
        let (directory, _) = front.directory()
        var titles: [String: String?] = [:]
        for mount in directory.mounts { titles[mount.path] = .some(mount.title) }
        for connection in Array(eventConnections.values) {
            guard case .events(let path) = connection.phase, var events = connection.events else { continue }
            guard let title = titles[path] else {
                close(connection)
                continue
            }
            let due = events.output(title: title, now: now)
            connection.events = events
            guard !due.isEmpty else { continue }
            connection.output += due
            flushEvents(connection)
        }
    }

    /// Sends a subscriber's pending output; arms `EPOLLOUT` while its socket is backed up, and closes it when it
    /// lets too much pile up or is gone.
    package func flushEvents(_ connection: HTTPConnection) {
        guard sendPending(connection) else { return close(connection) }
        if connection.unsent > limits.maxEventBacklog {
            logLimited(.dropped, now: monotonicNow(), "http: events \(connection.peer) dropped: not reading")
            return close(connection)
        }
        let backedUp = connection.unsent > 0
        guard backedUp != connection.waitsForOutput else { return }
        connection.waitsForOutput = backedUp
        let mask = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (backedUp ? EPOLLOUT.rawValue : 0)
        do {
            try epoll.modify(connection.fd, events: mask, tag: UInt64(connection.fd))
        } catch {
            close(connection)
        }
    }
}
