import CLinux
import Foundation
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Admitting, reading from and closing listeners' connections, and the loop's rate-limited log lines.
extension NetworkLoop {
    /// Admits a listener handed to this loop: an HTTP listener from the front end, or a raw one accepted by the
    /// output's home loop.
    package func admit(_ arrival: ArrivingListener) {
        guard let socket = arrival.takeSocket() else {
            host.member.assigned.subtract(1, ordering: .relaxed)
            return
        }
        freshen()  // the newest pages, for its burst
        admit(
            socket, peer: arrival.peer, kind: arrival.kind, responseHead: arrival.responseHead,
            request: arrival.request, session: arrival.session, refusal: arrival.refusal)
    }

    /// Refreshes the view once per wake-up (the first admission of a batch; later ones find it fresh).
    package func freshen() {
        guard !refreshedThisWake else { return }
        refresh()
        refreshedThisWake = true
    }

    /// Admits a listener through the server's admission point (`ListenerAdmission`: its rules, then its places —
    /// the station's, its address's across both protocols and the pool's loops, the server's), or refuses it: a raw
    /// listener is closed, an HTTP listener gets the refusal's status first. The connection was assigned to this loop
    /// (`NetworkPool.assign`): a refusal gives that back at once, a listener when it leaves.
    package func admit(
        _ socket: consuming FileDescriptor, peer: SocketAddress, kind: ListenerProtocol = .tcp,
        responseHead: [UInt8] = [], request: ListenerRequest? = nil, session: ListenerSession? = nil,
        refusal refusalAnswer: (AdmissionDecision) -> [UInt8] = { _ in [] }
    ) {
        counters.connections.add(1, ordering: .relaxed)
        let now = monotonicNow()
        let ask = AdmissionAsk(
            station: broadcaster.station, mount: broadcaster.mount, kind: kind, client: peer, request: request,
            id: session?.id, username: session?.username)
        var places = StationPlaces(loop: self, key: HostKey(peer), peer: peer)
        let (decision, admitted) = broadcaster.admission.admit(
            ask, places: &places, now: now, at: broadcaster.listenerMount(ask.kind))
        guard let entry = admitted else {
            host.member.assigned.subtract(1, ordering: .relaxed)
            counters.rejected.add(1, ordering: .relaxed)
            logLimited(
                .refused, .notice, now: now, "\(name): \(kind.rawValue) listener \(peer) refused: \(decision.reason)")
            let answer = refusalAnswer(decision)
            if !answer.isEmpty { sendBestEffort(answer, on: socket.rawValue) }
            session?.end(.notServed, now: now)
            return  // `socket` closes here
        }
        let key = places.key
        let fd = socket.rawValue
        // The socket options only tune the connection (latency, how much the kernel queues, a dead peer's bound): a
        // refusal is worth a warning, not the listener. A raw listener accepted on the station's listening socket
        // inherited them from it (`Broadcaster`), unless a reload changed them since.
        let options = configuration.listenerSocketOptions
        do {
            if kind != .tcp || !broadcaster.acceptedConnectionsHave(options) { try options.apply(to: fd) }
        } catch {
            logLimited(.socketTrouble, .warning, now: now, "\(name): listener \(peer): \(error)")
        }
        do {
            try loop.epoll.add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(fd))
        } catch {
            releasePlaces(key)
            broadcaster.admission.leave(entry)
            session?.end(.notServed, now: now)
            host.member.assigned.subtract(1, ordering: .relaxed)
            logLimited(.socketTrouble, .warning, now: now, "\(name): listener \(peer) not served: \(error)")
            return
        }
        let listener = Listener(
            socket: socket, peer: peer, connectedAt: now, kind: kind, responseHead: responseHead, request: request,
            entry: entry, session: session)
        // The session limit in force when it came (a reload changes it for the next ones), and its backend's.
        if configuration.maxListenerDuration > 0 { listener.state.endsAt = now + configuration.maxListenerDuration }
        if let endsAt = session?.endsAt { listener.state.endsAt = min(listener.state.endsAt, endsAt) }
        enter(listener)
        enterScan(listener)
        host.own(fd, self)
        if kind == .http { counters.httpListeners.add(1, ordering: .relaxed) }
        broadcaster.statistics.withLock { $0.joined(at: now) }
        // Info, so that `--log-level notice` turns it off (the text is then not even built); rate-limited, since a
        // client may connect as often as it likes (`access_log` has a line for every listener).
        if Log.isEnabled(.info) {
            let listening = counters.listeners.load(ordering: .relaxed)
            logLimited(
                .joined, .info, now: now,
                "\(name): \(kind.rawValue) listener #\(entry.id) \(peer) connected (\(listening) listening)")
        }
        flush(listener, now: now)  // headers and burst right away
    }

    /// A stream listener's places: the station output's listeners, its address's count across the pool's loops, the
    /// server's budget.
    struct StationPlaces: ListenerPlaces {
        let loop: NetworkLoop
        let key: HostKey
        let peer: SocketAddress

        mutating func take(_ place: ListenerPlace) -> String? {
            let configuration = loop.configuration
            let broadcaster = loop.broadcaster
            switch place {
            case .station:
                // The station's place (all its outputs and HLS together), then the output's own (a rendition may
                // have a smaller `max_listeners`).
                guard broadcaster.audience.reserve() else {
                    return "station full (\(broadcaster.audience.limit.load(ordering: .relaxed)) listeners)"
                }
                guard loop.counters.listeners.reserve(limit: configuration.maxListeners) else {
                    broadcaster.audience.release()
                    return "output full (\(configuration.maxListeners) listeners)"
                }
            case .address:
                guard broadcaster.reserveHost(key, limit: configuration.maxPerIP) else {
                    return "too many connections from \(NetworkLoop.clientName(peer)) (limit \(configuration.maxPerIP))"
                }
            case .server:
                guard broadcaster.budget.acquire() else {
                    let cap = broadcaster.budget.limit.load(ordering: .relaxed)
                    return "server full (\(cap) listeners across all stations: the open-files limit)"
                }
            }
            return nil
        }

        mutating func giveBack(_ place: ListenerPlace) {
            switch place {
            case .station:
                loop.counters.listeners.release()
                loop.broadcaster.audience.release()
            case .address: loop.broadcaster.releaseHost(key)
            case .server: loop.broadcaster.budget.release()
            }
        }
    }

    /// Gives back the three places an admitted listener took: the station's, its address's and the server's.
    private func releasePlaces(_ key: HostKey) {
        releaseStationPlaces(key)
        broadcaster.budget.release()
    }

    /// Gives back a listener's station, output and address places (a listener moved away keeps its server place).
    func releaseStationPlaces(_ key: HostKey) {
        counters.listeners.release()
        broadcaster.audience.release()
        broadcaster.releaseHost(key)
    }

    /// An IPv4 address, or an IPv6 client's /64, as `maxPerIP` counts them (only for a refusal's log line).
    package static func clientName(_ peer: SocketAddress) -> String {
        let key = HostKey(peer)
        return key.isIPv4 ? peer.host.replacingOccurrences(of: "::ffff:", with: "") : "\(peer.host)/64"
    }

    /// Reads what a listener sent and drops it; false when the listener was disconnected. A listener that shuts
    /// its side down (`nc -N`, a client that sent its request) is no longer read, but still written to.
    package func readAndDiscard(_ listener: Listener) -> Bool {
        while true {
            let result: IOResult<Int>
            do {
                result = try nonblockingSyscall("read") {
                    loop.scratch.withUnsafeMutableBytes { read(listener.fd, $0.baseAddress, $0.count) }
                }
            } catch {
                disconnect(listener, reason: "read failed: \(String(cString: strerror(error.errno)))")
                return false
            }
            switch result {
            case .wouldBlock:
                return true
            case .done(0):
                listener.readClosed = true
                watch(listener)
                return byFD[Int(listener.fd)] === listener
            case .done(let n):
                listener.bytesRead += n
                if listener.bytesRead > configuration.readCap {
                    counters.droppedChatty.add(1, ordering: .relaxed)
                    disconnect(listener, reason: "sent more than \(configuration.readCap) bytes", topic: .dropped)
                    return false
                }
            }
        }
    }

    /// Forgets the listener; its socket closes (and leaves the epoll set) when the last reference to it goes. Its
    /// leave line is a rate-limited info line (the access log has every one), or, for a listener dropped by a rule
    /// (`topic`), a rate-limited notice.
    /// - Parameter ended: what its authentication backend is told (`listener_remove`'s reason).
    package func disconnect(
        _ listener: Listener, reason: String, quiet: Bool = false, topic: LogTopic? = nil, ended: SessionEnd = .left
    ) {
        guard leave(listener) else { return }
        if Self.closesAbortively(
            backedUp: listener.state.backedUp, sinceProgress: monotonicNow() - listener.lastProgress)
        {
            do throws(SystemError) {
                try setAbortiveClose(listener.fd)
            } catch {
                logLimited(
                    .socketTrouble, .warning, now: monotonicNow(), "\(name): listener \(listener.peer): \(error)")
            }
        }
        leaveScan(listener)
        loop.deadlines.remove(listener.fd)
        host.disown(listener.fd)
        releasePlaces(listener.hostKey)
        broadcaster.admission.leave(listener.entry)
        listener.session?.end(ended, now: monotonicNow())
        if listener.kind == .http { counters.httpListeners.subtract(1, ordering: .relaxed) }
        let now = monotonicNow()
        broadcaster.statistics.withLock { $0.left(joinedAt: listener.connectedAt, at: now) }
        if let accessLog = broadcaster.accessLog, accessLog.isOpen {
            accessLog.write(
                AccessRecord(
                    leaving: listener.entry, request: listener.request,
                    bytes: listener.bytesSent - listener.responseHeadSent - listener.bytesBefore,
                    seconds: now - listener.connectedAt))
        }
        if quiet { return }
        func line() -> String {
            "\(name): \(listener.kind.rawValue) listener #\(listener.entry.id) \(listener.peer) left after \(String(format: "%.1f", now - listener.connectedAt)) s, "
                + "\(listener.bytesSent) bytes: \(reason)"
        }
        if let topic {
            logLimited(topic, .notice, now: now, line())
        } else if Log.isEnabled(.info) {
            logLimited(.left, .info, now: now, line())
        }
    }

    /// Puts the listener in this output's tables (by descriptor, and the list of them).
    func enter(_ listener: Listener) {
        let slot = Int(listener.fd)
        if slot >= byFD.count {
            byFD += Array(repeating: nil, count: slot + 1 - byFD.count + 64)
            position += Array(repeating: -1, count: byFD.count - position.count)
        }
        byFD[slot] = listener
        position[slot] = active.count
        active.append(listener)
    }

    /// Takes the listener out of those tables (swap-remove); false when it is not there.
    func leave(_ listener: Listener) -> Bool {
        let slot = Int(listener.fd)
        guard slot >= 0, slot < byFD.count, byFD[slot] === listener else { return false }
        let index = position[slot]
        let last = active.removeLast()
        if last !== listener {
            active[index] = last
            position[Int(last.fd)] = index
        }
        byFD[slot] = nil
        position[slot] = -1
        return true
    }

    /// Closes the listener with this ID, if this loop serves it here (an admin's `killclient`; one scan, kicks are
    /// rare). It ends as any listener does: the access log's line, its session's remove with reason `kicked`.
    package func kick(_ id: ListenerID) {
        guard let listener = active.first(where: { $0.entry.id == id }) else { return }
        disconnect(listener, reason: "closed by the admin (killclient)", topic: .left, ended: .kicked)
    }

    /// A listener's connection closes with a RST (`setAbortiveClose`) when its socket is backed up and no write has
    /// taken a byte for `stuckAfter` seconds: its path is dead or it stopped reading, and the bytes the kernel holds
    /// are for no one — a graceful close would leave them to a `FIN-WAIT-1` socket retransmitting to a dead path
    /// (until `TCP_USER_TIMEOUT`), holding up to a send buffer each (nginx's `reset_timedout_connection`). One that
    /// still reads, however slowly (a listener dropped as too slow), or had everything it was sent closes gracefully:
    /// it gets what the kernel holds, then the FIN.
    package static func closesAbortively(backedUp: Bool, sinceProgress: Double) -> Bool {
        backedUp && !(sinceProgress < stuckAfter)
    }

    /// Seconds without a write taking a byte after which a backed-up listener counts as stuck.
    package static let stuckAfter = 2.0

    /// Writes a line of a kind that can repeat, within the loop's rate limit: after 10 in 10 s, the rest are
    /// counted and reported in one line.
    package func logLimited(
        _ topic: LogTopic, _ priority: Log.Priority, now: Double, _ message: @autoclosure () -> String
    ) {
        loop.logLimited(topic, priority, now: now, message())
    }

    /// Reports the kinds of lines whose window ended with lines left out.
    package func logSummaries(now: Double) {
        loop.logSummaries(now: now)
    }
}
