import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Title event streams (`/NAME/events`): subscribers are admitted by `EventSubscribers` (per address across every
/// mount, within their station's listener limit, a share of the server's listener places, each taking one place),
/// are written only when the `EventStream` says so, and are closed when they leave more than `maxEventBacklog` bytes
/// unread or stay backed up past `EventStream.stallLimit`. A wake-up looks at a subscriber only when its mount's
/// title changed (the titles are looked at every `titleCheckInterval`) or its keep-alive is due (`keepAlives`).
extension HTTPFrontLoop {
    package func subscribe(
        _ connection: HTTPConnection, to mount: PublicDirectory.Mount, broadcaster: Broadcaster, head: [UInt8]
    ) {
        let limits = broadcaster.configuration
        let path = mount.path
        var refusal = subscribers.refusal(
            mount: path, host: connection.hostKey, listeners: broadcaster.counters.listeners.load(ordering: .relaxed),
            maxListeners: limits.maxListeners, maxPerIP: limits.maxPerIP,
            budgetLimit: front.budget.limit.load(ordering: .relaxed))
        if refusal == nil && !front.budget.acquire() { refusal = "server full (the open-files limit)" }
        if let refusal {
            http.logLimited(.refused, now: monotonicNow(), "http: events \(connection.peer) refused: \(refusal)")
            return http.respond(connection, PublicRouter.text(503, refusal + "\n").encoded)
        }
        do {
            try http.loop.epoll.modify(
                connection.fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(connection.fd))
        } catch {
            front.budget.release()
            return http.close(connection)
        }
        subscribers.add(mount: path, host: connection.hostKey)
        eventConnections[path, default: [:]][connection.fd] = connection
        connection.phase = .events(mount: path)
        http.untime(connection)  // it lasts; its places are the station's
        let now = monotonicNow()
        var events = EventStream(now: now)
        connection.output = head + events.output(title: mount.title, now: now)
        connection.events = events
        keepAlives.set(connection.fd, events.nextKeepAlive)
        if Log.isEnabled(.info) {
            http.loop.logLimited(.subscribed, .info, now: now, "http: events \(connection.peer) subscribed to \(path)")
        }
        flushEvents(connection)
    }

    /// Forgets a subscriber's counts and place (its connection is already gone from the table).
    package func unsubscribe(_ connection: HTTPConnection, from path: String) {
        front.budget.release()
        eventConnections[path]?[connection.fd] = nil
        if eventConnections[path]?.isEmpty == true { eventConnections[path] = nil }
        keepAlives.remove(connection.fd)
        subscribers.remove(mount: path, host: connection.hostKey)
        if Log.isEnabled(.info) {
            http.loop.logLimited(
                .subscribed, .info, now: monotonicNow(), "http: events \(connection.peer) left \(path)")
        }
    }

    /// Gives the subscribers what their `EventStream` says is due: every `titleCheckInterval`, a changed title to
    /// its mount's subscribers (a subscriber whose mount went away with a reload is closed); and a keep-alive to
    /// each one whose time has come.
    package func sendEvents(now: Double) {
        if now >= nextTitleCheck {
            nextTitleCheck = now + Self.titleCheckInterval
            let (directory, _) = front.directory()
            var titles: [String: String?] = [:]
            for mount in directory.mounts { titles[mount.path] = .some(mount.title) }
            if !directory.mounts.isEmpty { titles[IndexPage.eventsPath] = .some(IndexPage.titles(directory)) }
            for (path, table) in eventConnections {
                guard let title = titles[path] else {
                    for connection in table.values { http.close(connection) }
                    continue
                }
                guard seenTitles[path].map({ $0 != title }) ?? true else { continue }
                for connection in table.values { sendEvent(connection, title: title, now: now) }
            }
            seenTitles = titles
        }
        for fd in keepAlives.popExpired(now: now) {
            // The title it was sent: a keep-alive (a change is the title check's).
            guard let connection = http.connections[fd], let sent = connection.events?.sentTitle else { continue }
            sendEvent(connection, title: sent, now: now)
        }
    }

    /// What the subscriber's `EventStream` says for `title` at `now`, sent; its next keep-alive noted.
    private func sendEvent(_ connection: HTTPConnection, title: String?, now: Double) {
        guard var events = connection.events else { return }
        let due = events.output(title: title, now: now)
        connection.events = events
        keepAlives.set(connection.fd, events.nextKeepAlive)
        guard !due.isEmpty else { return }
        connection.output += due
        flushEvents(connection)
    }

    /// Sends a subscriber's pending output; arms `EPOLLOUT` while its socket is backed up, and closes it when it
    /// lets too much pile up, stays backed up past the stall limit, or is gone.
    package func flushEvents(_ connection: HTTPConnection) {
        guard http.sendPending(connection) else { return http.close(connection) }
        let now = monotonicNow()
        if connection.unsent > limits.maxEventBacklog {
            http.logLimited(.dropped, now: now, "http: events \(connection.peer) dropped: not reading")
            return http.close(connection)
        }
        let backedUp = connection.unsent > 0
        connection.events?.noteBackedUp(backedUp, now: now)
        if connection.events?.isStalled(now: now) == true {
            http.logLimited(
                .dropped, now: now,
                "http: events \(connection.peer) dropped: its socket took nothing for "
                    + "\(wholeSeconds(EventStream.stallLimit)) s")
            return http.close(connection)
        }
        guard backedUp != connection.waitsForOutput else { return }
        connection.waitsForOutput = backedUp
        let mask = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (backedUp ? EPOLLOUT.rawValue : 0)
        do {
            try http.loop.epoll.modify(connection.fd, events: mask, tag: UInt64(connection.fd))
        } catch {
            http.close(connection)
        }
    }
}
