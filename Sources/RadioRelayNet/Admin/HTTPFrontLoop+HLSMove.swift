import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// `moveclients` for HLS players, on the front end's thread: a player holds no connection, so it is moved by its next
/// playlist reload — the URL it has answers its own playlist (`HLSMove`: the old stream's segments it was shown, a
/// discontinuity, then the destination's), and its session, with its ID, goes on in the destination's stream.
extension HTTPFrontLoop {
    /// Moves the live HLS sessions of `source` (all, or listener `id`'s) to `target`'s stream, counting them in
    /// `tally`.
    func moveHLS(
        from source: PublicDirectory.Mount, to target: PublicDirectory.Mount,
        broadcasters: (source: Broadcaster, target: Broadcaster), id: ListenerID?, tally: MoveTally, now: Double
    ) {
        guard let sourceStream = source.hls else { return }
        let sessions = sourceStream.takeSessions(id: id, now: now)
        guard !sessions.isEmpty else { return }
        let policy = broadcasters.source.admission.policy
        var refusal: String?
        if target.hls == nil {
            refusal = "HLS players, the destination has no HLS stream"
        } else if policy.authentication[source.station]?.isOn == true {
            refusal = "HLS players of a protected station (their pass is that station's)"
        } else if target.station != source.station, policy.authentication[target.station]?.isOn == true {
            refusal = "the destination authenticates its listeners"
        } else if (target.hls?.snapshot.newest ?? -1) < 0 {
            refusal = "HLS players, the destination has no segment yet"
        }
        guard let targetStream = target.hls, refusal == nil else {
            for (key, session) in sessions {
                sourceStream.restore(key, session)
                tally.stayed(refusal ?? "")
            }
            return
        }
        let sourceSnapshot = sourceStream.snapshot
        let targetSnapshot = targetStream.snapshot
        let prefix = "../" + target.hlsDirectory.dropFirst()
        for (key, session) in sessions {
            if let reason = hlsRefusal(key, session, into: target, from: sourceStream, policy: policy) {
                sourceStream.restore(key, session)
                tally.stayed(reason)
                continue
            }
            guard broadcasters.target.audience.reserve() else {
                sourceStream.restore(key, session)
                tally.stayed("the destination station is full")
                continue
            }
            let old = session.entry
            let entry = ListenerEntry(
                id: old.id, place: ListenerMount(station: target.station, mount: target.path, kind: .hls),
                address: old.address, userAgent: old.userAgent, username: old.username, connectedAt: old.connectedAt)
            let request = session.request.moved(to: target.hlsDirectory + "live.m3u8")
            let (kept, ended) = targetStream.begin(key, entry: entry, request: request, bytes: 0, now: now)
            if let ended { endSession(ended, of: broadcasters.target) }
            guard kept else {
                broadcasters.target.audience.release()
                sourceStream.restore(key, session)
                tally.stayed("the destination keeps no more HLS sessions")
                continue
            }
            // Its time on the old stream: its access-log line there; the roster names it on the new one.
            broadcasters.source.audience.release()
            broadcasters.source.accessLog?.write(
                AccessRecord(
                    leaving: old, request: session.request, bytes: old.bytes.load(ordering: .relaxed),
                    seconds: max(0, now - session.arrived)))
            broadcasters.source.admission.leave(old)
            broadcasters.target.admission.roster.add(entry)
            hlsStreams[ObjectIdentifier(targetStream)] = (targetStream, broadcasters.target)
            hlsMoves[HLSMoveKey(stream: ObjectIdentifier(sourceStream), key: key)] = MovedPlayer(
                move: HLSMove(id: old.id, source: sourceSnapshot, destination: targetSnapshot, prefix: prefix),
                destination: targetStream)
            tally.moved()
        }
    }

    /// Why one player stays: the destination's access list refuses it, it was moved before (its playlist is
    /// already another stream's), or the table of moved players is full.
    private func hlsRefusal(
        _ key: HLSSessions.Key, _ session: HLSSessions.Session, into target: PublicDirectory.Mount,
        from stream: HLSStream, policy: AdmissionPolicy
    ) -> String? {
        if hlsMoves.count >= HLSSessions.maxSessions { return "too many HLS players moved" }
        if hlsMoves.contains(where: { $0.key.key == key && $0.value.destination === stream }) {
            return "HLS players moved before (they reload another mount's playlist)"
        }
        if let client = SocketAddress(host: session.entry.address, port: 0) {
            let ask = AdmissionAsk(
                station: target.station, mount: target.path, kind: .hls, client: client, request: session.request)
            if let (decision, _) = policy.screen(ask) { return "refused by the destination: \(decision.reason)" }
        }
        return nil
    }

    /// Answers a moved player's request (true), noted in its session on the destination: its playlist is its own
    /// (`HLSMove`), and not for a shared cache; a segment of its old stream is what it was. False when it is no
    /// moved player, or its session there ended (it is then a new player here).
    func answerMoved(
        _ connection: HTTPConnection, _ response: HTTPResponse, key: HLSSessions.Key, request: ListenerRequest,
        stream: HLSStream, now: Double
    ) -> Bool {
        let moveKey = HLSMoveKey(stream: ObjectIdentifier(stream), key: key)
        guard var held = hlsMoves[moveKey] else { return false }
        var answer = response
        let path = request.line.utf8.split(separator: UInt8(ascii: " ")).dropFirst().first
        if let path, path.split(separator: UInt8(ascii: "/")).last.map({ Array($0) == Array("live.m3u8".utf8) }) == true
        {
            let body = held.move.playlist(source: stream.snapshot, destination: held.destination.snapshot)
            hlsMoves[moveKey] = held
            answer = HTTPResponse(
                status: body == nil ? 503 : 200, contentType: PublicRouter.playlistType,
                bytes: body ?? Array("the next segment is not ready yet\n".utf8),
                headers: response.headers.filter { !["Cache-Control", "ETag", "Last-Modified"].contains($0.0) }
                    + [("Cache-Control", "private, no-cache")])
            answer.keepAlive = response.keepAlive
            answer.omitsBody = response.omitsBody
        }
        guard held.destination.answered(key, bytes: answer.payload.count, now: now) != nil else {
            hlsMoves[moveKey] = nil
            return false
        }
        send(answer, on: connection)
        return true
    }
}
