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
        _ connection: HTTPConnection, to mount: PublicDirectory.Mount, broadcaster: Broadcaster, head: [UInt8],
        request: ListenerRequest
    ) {
        let path = mount.path
        let now = monotonicNow()
        let ask = AdmissionAsk(
            station: mount.station, mount: path, kind: .events, client: connection.peer, request: request)
        var places = SubscriberPlaces(
            subscribers: subscribers, mount: path, host: connection.hostKey, broadcaster: broadcaster,
            budget: front.budget)
        let (decision, admitted) = broadcaster.admission.admit(ask, places: &places, now: now)
        guard let entry = admitted else {
            http.logLimited(.refused, now: now, "http: events \(connection.peer) refused: \(decision.reason)")
            return http.respond(connection, PublicRouter.notAdmitted(decision).encoded)
        }
        do {
            try http.loop.epoll.modify(
                connection.fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(connection.fd))
        } catch {
            front.budget.release()
            broadcaster.admission.leave(entry)
            return http.close(connection)
        }
        subscribers.add(mount: path, host: connection.hostKey)
        eventConnections[path, default: [:]][connection.fd] = connection
        connection.phase = .events(mount: path)
        connection.listener = entry
        connection.request = request
        connection.accessLog = broadcaster.accessLog
        connection.admission = broadcaster.admission
        http.untime(connection)  // it lasts; its places are the station's
        var events = EventStream(now: now)
        connection.output = head + events.output(title: mount.title, now: now)
        connection.events = events
        keepAlives.set(connection.fd, events.nextKeepAlive)
        if Log.isEnabled(.info) {
            http.loop.logLimited(
                .subscribed, .info, now: now, "http: events #\(entry.id) \(connection.peer) subscribed to \(path)")
        }
        flushEvents(connection)
    }

    /// A subscriber's places: within its station output's `max_listeners` (listeners and subscribers together), its
    /// address's cap across every mount, and the subscribers' share of the server's places, each taking one of those.
    struct SubscriberPlaces: ListenerPlaces {
        let subscribers: EventSubscribers
        let mount: String
        let host: HostKey
        let broadcaster: Broadcaster
        let budget: ListenerBudget

        mutating func take(_ place: ListenerPlace) -> String? {
            let limits = broadcaster.configuration
            switch place {
            case .station:
                return subscribers.stationRefusal(
                    mount: mount, listeners: broadcaster.audience.count,
                    maxListeners: broadcaster.audience.limit.load(ordering: .relaxed))
            case .address:
                return subscribers.addressRefusal(host: host, maxPerIP: limits.maxPerIP)
            case .server:
                if let refusal = subscribers.shareRefusal(budgetLimit: budget.limit.load(ordering: .relaxed)) {
                    return refusal
                }
                return budget.acquire() ? nil : "server full (the open-files limit)"
            }
        }

        mutating func giveBack(_ place: ListenerPlace) {
            if place == .server { budget.release() }
        }
    }

    /// Forgets a subscriber's counts and place (its connection is already gone from the table), and writes its
    /// access-log line.
    package func unsubscribe(_ connection: HTTPConnection, from path: String) {
        front.budget.release()
        eventConnections[path]?[connection.fd] = nil
        if eventConnections[path]?.isEmpty == true { eventConnections[path] = nil }
        keepAlives.remove(connection.fd)
        subscribers.remove(mount: path, host: connection.hostKey)
        guard let entry = connection.listener else { return }
        connection.admission?.leave(entry)
        let now = monotonicNow()
        connection.accessLog?.write(
            AccessRecord(
                leaving: entry, request: connection.request, bytes: entry.bytes.load(ordering: .relaxed),
                seconds: now - entry.connectedAt))
        if Log.isEnabled(.info) {
            http.loop.logLimited(
                .subscribed, .info, now: now, "http: events #\(entry.id) \(connection.peer) left \(path)")
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
