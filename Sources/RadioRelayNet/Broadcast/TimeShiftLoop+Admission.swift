import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Admitting and closing time-shifted listeners.
extension TimeShiftLoop {
    /// Finds where a listener starts, then admits it through the server's admission point (its places: the
    /// station's, its address's, the server's, and one of this mount's readers), or answers why not: `416` with the
    /// range the archive holds for a moment outside it, `404` when nothing is archived yet.
    func admit(_ arrival: TimeShiftService.Arrival, now: Double) {
        let incoming = arrival.listener
        guard let socket = incoming.takeSocket() else { return }
        let index = service.index()
        if let segment = arrival.segment {
            return answerSegment(
                segment.start, container: segment.container, on: socket, arrival: arrival, index: index, now: now)
        }
        let target = arrival.start.target(now: wallClockNow())
        guard let range = index.range else {
            refuse(
                socket, incoming,
                arrival.answer(404, "", Array("nothing is archived for \(broadcaster.mount) yet\n".utf8), []))
            return
        }
        guard let location = index.locate(target) else {
            let held = "\(Self.iso(range.lowerBound)) to \(Self.iso(range.upperBound))"
            let text = "\(Self.iso(target)) is not in the archive of \(broadcaster.mount): it holds \(held)\n"
            let field = ("X-Archive-Range", "\(Self.iso(range.lowerBound))/\(Self.iso(range.upperBound))")
            refuse(socket, incoming, arrival.answer(416, "", Array(text.utf8), [field]))
            return
        }
        let ask = AdmissionAsk(
            station: broadcaster.station, mount: broadcaster.mount, kind: .http, client: incoming.peer,
            request: incoming.request, id: incoming.session?.id, username: incoming.session?.username)
        let key = HostKey(incoming.peer)
        var places = Places(loop: self, key: key, peer: incoming.peer)
        let (decision, admitted) = broadcaster.admission.admit(
            ask, places: &places, now: now, at: broadcaster.listenerMount(.http))
        guard let entry = admitted else {
            service.counters.refused.add(1, ordering: .relaxed)
            note(
                "refused", "\(label): time-shifted listener \(incoming.peer) refused: \(decision.reason)",
                priority: .notice)
            sendBestEffort(incoming.refusal(decision), on: socket.rawValue)
            incoming.session?.end(.notServed, now: now)
            return
        }
        do {
            try setNonblocking(socket.rawValue)
        } catch {
            places.giveBackAll()
            broadcaster.admission.leave(entry)
            incoming.session?.end(.notServed, now: now)
            return
        }
        // A live listener's socket options: above all its send buffer, without which the kernel's autotuning let a
        // hung reader's connection take 4 MB (5 minutes of audio) before it backed up and its 30 s began. Its peer
        // timeout is past `stuckAfter`, so that a reader that stops reading is this thread's to close, with its
        // reason, not the kernel's (which ends a zero window after `TCP_USER_TIMEOUT` too). A refusal only tunes the
        // connection less: worth a line, not the listener.
        var options = broadcaster.configuration.listenerSocketOptions
        options.peerTimeout.seconds = max(options.peerTimeout.seconds, Int(service.stuckAfter.rounded(.up)) + 5)
        do {
            try options.apply(to: socket.rawValue)
        } catch {
            note("options", "\(label): time-shifted listener \(incoming.peer): \(error)")
        }
        let fileStart = index.file(named: location.file)?.start ?? location.time
        let playhead = ArchivePlayhead(location: location, fileStart: fileStart, target: target, format: service.format)
        let from = playhead.position  // the moment it hears first: the one asked for, or the next file's after a gap
        let listener = TimeShiftListener(
            socket: socket, peer: "\(incoming.peer)", hostKey: key, entry: entry, session: incoming.session,
            request: incoming.request,
            head: Self.adding(("X-Archive-Start", Self.iso(from, exact: true)), to: incoming.responseHead),
            playhead: playhead, now: now)
        let duration = broadcaster.configuration.maxListenerDuration
        if duration > 0 { listener.endsAt = now + duration }
        if let endsAt = incoming.session?.endsAt { listener.endsAt = min(listener.endsAt, endsAt) }
        listeners.append(listener)
        service.serving.withLock { _ = $0.insert(entry.id) }
        service.counters.listeners.add(1, ordering: .relaxed)
        service.counters.served.add(1, ordering: .relaxed)
        broadcaster.statistics.withLock { $0.joined(at: now) }
        let behind = max(0, Int64(wallClockNow() * 1000) - from) / 1000
        note(
            "joined",
            "\(label): time-shifted listener #\(entry.id) \(incoming.peer) starts at \(Self.iso(from))"
                + " (\(behind) s behind live\(location.skippedGap ? ", after a gap in the archive" : ""))",
            priority: .info)
    }

    private func refuse(_ socket: borrowing FileDescriptor, _ incoming: ArrivingListener, _ answer: [UInt8]) {
        service.counters.refused.add(1, ordering: .relaxed)
        sendBestEffort(answer, on: socket.rawValue)
        incoming.session?.end(.notServed)
    }

    /// Closes a listener: its places given back, its session ended, its access log line.
    func disconnect(
        _ listener: TimeShiftListener, reason: String, ended: SessionEnd, now: Double, quiet: Bool = false
    ) {
        guard let position = listeners.firstIndex(where: { $0 === listener }) else { return }
        listeners.remove(at: position)
        // Too slow means nothing taken for `stuckAfter` with bytes still unsent: its path is dead or it stopped
        // reading, and the kernel's bytes are for no one. A RST, as a stuck live listener gets
        // (`NetworkLoop.closesAbortively`), so no FIN-WAIT-1 socket keeps them retransmitting.
        if ended == .tooSlow {
            do throws(SystemError) {
                try setAbortiveClose(listener.fd)
            } catch {
                note("socket", "\(label): time-shifted listener #\(listener.entry.id) \(listener.peer): \(error)")
            }
        }
        service.serving.withLock { _ = $0.remove(listener.entry.id) }
        service.counters.listeners.subtract(1, ordering: .relaxed)
        service.counters.bytesSent.add(listener.bytesSent, ordering: .relaxed)
        var places = Places(loop: self, key: listener.hostKey, peer: nil)
        places.giveBackAll()
        broadcaster.admission.leave(listener.entry)
        listener.session?.end(ended, now: now)
        broadcaster.statistics.withLock { $0.left(joinedAt: listener.startedAt, at: now) }
        if let accessLog = broadcaster.accessLog, accessLog.isOpen {
            accessLog.write(
                AccessRecord(
                    leaving: listener.entry, request: listener.request,
                    bytes: max(0, listener.bytesSent - listener.headLength), seconds: now - listener.startedAt))
        }
        if quiet { return }
        note(
            "left",
            "\(label): time-shifted listener #\(listener.entry.id) \(listener.peer) left after "
                + "\(Int(now - listener.startedAt)) s, \(listener.bytesSent) bytes: \(reason)",
            priority: ended == .left ? .info : .notice)
    }

    /// `head` with `field` before its blank line: the moment a time-shifted listener hears first
    /// (`X-Archive-Start`), which a player can show and a test can check. A head without a blank line at its end is
    /// kept as it is.
    static func adding(_ field: (String, String), to head: [UInt8]) -> [UInt8] {
        guard head.count >= 4, head.suffix(4).elementsEqual("\r\n\r\n".utf8) else { return head }
        var result = Array(head.dropLast(2))
        result += Array("\(field.0): \(field.1)\r\n\r\n".utf8)
        return result
    }

    /// `millis` since the epoch as UTC, to the second (`2026-12-05T08:00:00Z`), or to the millisecond with `exact`
    /// (`…:00.250Z`), as `start=` takes it.
    static func iso(_ millis: Int64, exact: Bool = false) -> String {
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let text = String(UTCTime(Double(seconds)).iso8601.prefix(19))
        guard exact else { return text + "Z" }
        let fraction = Int(millis - seconds * 1000)
        return text + (fraction < 10 ? ".00" : fraction < 100 ? ".0" : ".") + "\(fraction)Z"
    }

    /// A time-shifted listener's places: the station's (and one of the mount's readers), its address's (and one of
    /// its readers here), the server's.
    struct Places: ListenerPlaces {
        let loop: TimeShiftLoop
        let key: HostKey
        let peer: SocketAddress?

        init(loop: TimeShiftLoop, key: HostKey, peer: SocketAddress?) {
            self.loop = loop
            self.key = key
            self.peer = peer
        }

        mutating func take(_ place: ListenerPlace) -> String? {
            let broadcaster = loop.broadcaster
            switch place {
            case .station:
                guard loop.listeners.count < TimeShiftService.maxReaders else {
                    return "time shift full (\(TimeShiftService.maxReaders) readers of the archive)"
                }
                guard broadcaster.audience.reserve() else {
                    return "station full (\(broadcaster.audience.limit.load(ordering: .relaxed)) listeners)"
                }
            case .address:
                guard loop.perAddress[key, default: 0] < TimeShiftService.maxReadersPerAddress else {
                    return "too many time-shifted listeners from one address (\(TimeShiftService.maxReadersPerAddress))"
                }
                guard broadcaster.reserveHost(key, limit: broadcaster.configuration.maxPerIP) else {
                    return "too many connections from one address (limit \(broadcaster.configuration.maxPerIP))"
                }
                loop.perAddress[key, default: 0] += 1
            case .server:
                guard broadcaster.budget.acquire() else {
                    return
                        "server full (\(broadcaster.budget.limit.load(ordering: .relaxed)) listeners across all stations)"
                }
            }
            return nil
        }

        mutating func giveBack(_ place: ListenerPlace) {
            let broadcaster = loop.broadcaster
            switch place {
            case .station: broadcaster.audience.release()
            case .address:
                broadcaster.releaseHost(key)
                let left = loop.perAddress[key, default: 1] - 1
                loop.perAddress[key] = left > 0 ? left : nil
            case .server: broadcaster.budget.release()
            }
        }

        /// Gives back all three (a listener that leaves).
        mutating func giveBackAll() {
            for place in ListenerPlace.allCases { giveBack(place) }
        }
    }
}
