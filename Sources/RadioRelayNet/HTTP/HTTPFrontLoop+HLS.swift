import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// HLS players through the admission point: a player's first answer (200 or 304) begins its session
/// (`HLSSessions`: known by address and user agent, with a `ListenerID`), later answers are noted in it, and a
/// session whose window ended gets its access-log line. An answer that begins no session (a 404, the 503 before the
/// first segment) still passes the admission's rules.
extension HTTPFrontLoop {
    func answerHLS(
        _ connection: HTTPConnection, _ response: HTTPResponse, request: ListenerRequest,
        mount: PublicDirectory.Mount, broadcaster: Broadcaster
    ) {
        guard let stream = mount.hls else { return send(response, on: connection) }
        let now = monotonicNow()
        let key = HLSSessions.Key(host: connection.hostKey, agent: request.userAgent)
        let counted = response.status == 200 || response.status == 304
        let bytes = response.payload.count
        if counted, stream.answered(key, bytes: bytes, now: now) != nil { return send(response, on: connection) }
        let ask = AdmissionAsk(
            station: mount.station, mount: mount.path, kind: .hls, client: connection.peer, request: request)
        var places = NoPlaces()
        guard counted else {
            let decision = broadcaster.admission.policy.decide(ask, places: &places)
            return send(decision == .admit ? response : refused(decision, connection), on: connection)
        }
        let (decision, admitted) = broadcaster.admission.admit(ask, places: &places, now: now)
        guard let entry = admitted else { return send(refused(decision, connection), on: connection) }
        let (kept, ended) = stream.begin(key, entry: entry, request: request, bytes: bytes, now: now)
        if let ended { endSession(ended, of: broadcaster) }
        if kept {
            hlsStreams[ObjectIdentifier(stream)] = (stream, broadcaster)
            if Log.isEnabled(.info) {
                http.loop.logLimited(
                    .joined, .info, now: now,
                    "http: hls listener #\(entry.id) \(connection.peer) began on \(mount.path)")
            }
        } else {
            broadcaster.admission.leave(entry)
        }
        send(response, on: connection)
    }

    private func refused(_ decision: AdmissionDecision, _ connection: HTTPConnection) -> HTTPResponse {
        http.logLimited(
            .refused, now: monotonicNow(), "http: hls listener \(connection.peer) refused: \(decision.reason)")
        return PublicRouter.notAdmitted(decision)
    }

    /// Ends the sessions whose window is over (every one with `all`, at the stop).
    func endSessions(now: Double, all: Bool = false) {
        for (id, held) in hlsStreams {
            for session in held.stream.endSessions(now: now, all: all) { endSession(session, of: held.broadcaster) }
            if held.stream.sessionsKept == 0 { hlsStreams[id] = nil }
        }
    }

    /// A session ended: out of the roster, and its access-log line (time connected: to its last answer).
    private func endSession(_ session: HLSSessions.Session, of broadcaster: Broadcaster) {
        let entry = session.entry
        broadcaster.admission.leave(entry)
        let seconds = max(0, session.lastSeen - entry.connectedAt)
        broadcaster.accessLog?.write(
            AccessRecord(
                leaving: entry, request: session.request, bytes: entry.bytes.load(ordering: .relaxed), seconds: seconds)
        )
        if Log.isEnabled(.info) {
            http.loop.logLimited(
                .left, .info, now: monotonicNow(),
                "http: hls listener #\(entry.id) \(entry.address) ended after \(Int(seconds)) s on \(entry.mount)")
        }
    }
}
