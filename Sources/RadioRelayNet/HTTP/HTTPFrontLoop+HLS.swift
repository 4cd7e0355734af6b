import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// HLS players through the admission point: a player's first answer (200 or 304) begins its session
/// (`HLSSessions`: known by address and user agent, with a `ListenerID`), later answers are noted in it, and a
/// session whose window ended gets its access-log line. An answer that begins no session (a 404, the 503 before the
/// first segment) still passes the admission's rules.
///
/// A protected station's player is authenticated once, at its first playlist (`HTTPFrontLoop+Auth`: credentials or
/// a token in the URL, its backend or htpasswd), and given a *pass*: 128 random bits, kept here with its station,
/// its address and its backend session (`HLSPass`). The playlists it is sent name every segment, init segment and
/// variant with `?pass=…`, so the segments are not authenticated again; a request with a pass is served only while
/// the pass lives — from the address it was given to, within `HLSSessions.window` of its last use — and a segment or
/// init segment without a live pass is refused (403). A player reloads the playlist URL it was given, which has no
/// pass: the same request again (its address, user agent, query and credentials, the pass's *identity*) gets the
/// same pass without another call. A pass unused for the window ends, and its session's `listener_remove` goes. At
/// most `maxPasses` live passes, `maxPassesPerAddress` from one address. The station's answers are `private` (a
/// shared cache must not serve them to others).
extension HTTPFrontLoop {
    /// Passes kept at most: one per protected player; beyond, a new player is refused (503).
    static let maxPasses = 16_384
    static let maxPassesPerAddress = 64
    static let passName = "pass"

    func answerHLS(
        _ connection: HTTPConnection, _ response: HTTPResponse, request: ListenerRequest,
        mount: PublicDirectory.Mount, broadcaster: Broadcaster, raw: HTTPRequestHead.Request?
    ) {
        guard let stream = mount.hls else { return send(response, on: connection) }
        if let auth = broadcaster.admission.policy.authentication[mount.station], auth.isOn, let raw {
            return answerProtected(
                connection, response, request: request, mount: mount, broadcaster: broadcaster, raw: raw, auth: auth)
        }
        let key = HLSSessions.Key(host: connection.hostKey, agent: request.userAgent)
        answer(connection, response, key: key, request: request, mount: mount, stream: stream, broadcaster: broadcaster)
    }

    /// Notes the answer in its session (beginning one through the admission point when it has none) and sends it.
    private func answer(
        _ connection: HTTPConnection, _ response: HTTPResponse, key: HLSSessions.Key, request: ListenerRequest,
        mount: PublicDirectory.Mount, stream: HLSStream, broadcaster: Broadcaster
    ) {
        let now = monotonicNow()
        let counted = response.status == 200 || response.status == 304
        let bytes = response.payload.count
        if counted, answerMoved(connection, response, key: key, request: request, stream: stream, now: now) { return }
        if counted, stream.answered(key, bytes: bytes, now: now) != nil { return send(response, on: connection) }
        let ask = AdmissionAsk(
            station: mount.station, mount: mount.path, kind: .hls, client: connection.peer, request: request)
        guard counted else {
            var none = NoPlaces()
            let decision = broadcaster.admission.policy.decide(ask, places: &none)
            return send(decision == .admit ? response : refused(decision, connection), on: connection)
        }
        var places = SessionPlaces(broadcaster: broadcaster)
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
            broadcaster.audience.release()
        }
        send(response, on: connection)
    }

    /// An HLS session's place: one of its station's `max_listeners` (it holds no connection, so no address or
    /// server place), given back when the session ends.
    struct SessionPlaces: ListenerPlaces {
        let broadcaster: Broadcaster

        mutating func take(_ place: ListenerPlace) -> String? {
            guard place == .station else { return nil }
            let limit = broadcaster.audience.limit.load(ordering: .relaxed)
            return broadcaster.audience.reserve() ? nil : "station full (\(limit) listeners)"
        }

        mutating func giveBack(_ place: ListenerPlace) {
            if place == .station { broadcaster.audience.release() }
        }
    }

    /// A protected station's HLS request: served with its live pass, else its first playlist authenticated.
    private func answerProtected(
        _ connection: HTTPConnection, _ response: HTTPResponse, request: ListenerRequest,
        mount: PublicDirectory.Mount, broadcaster: Broadcaster, raw: HTTPRequestHead.Request,
        auth: ListenerAuthentication
    ) {
        let now = monotonicNow()
        // Its live pass: the one its request names (from the address it was given to), or, for a player reloading
        // its first playlist's URL (no pass in it), the one that request was given: served, no call.
        let identity = Self.identity(raw, station: mount.station, host: connection.hostKey)
        let named = Self.pass(in: raw.query).flatMap { pass in
            hlsPasses[pass].map { $0.station == mount.station && $0.host == connection.hostKey } == true ? pass : nil
        }
        if let pass = named ?? hlsIdentities[identity], let held = hlsPasses[pass], now >= held.endsAt {
            // Its session is over (`max_listener_duration`, or the backend's time limit): refused from now on.
            endPass(pass, held.endsAt == held.session?.endsAt ? .timeLimit : .sessionLimit, now: now)
            return refuseAuth(
                connection, PublicRouter.text(403, "this session is over: its time limit passed\n"),
                reason: "hls session over its time limit", now: now)
        }
        if let pass = named ?? hlsIdentities[identity], var held = hlsPasses[pass],
            now - held.lastUsed < HLSSessions.window, let stream = mount.hls
        {
            held.lastUsed = now
            hlsPasses[pass] = held
            let key = HLSSessions.Key(host: connection.hostKey, agent: "#" + pass)
            return answer(
                connection, Self.stamped(response, pass: pass), key: key, request: request, mount: mount,
                stream: stream, broadcaster: broadcaster)
        }
        let name = raw.path.split(separator: "/").last ?? ""
        guard name == "live.m3u8" || name == "master.m3u8" else {
            broadcaster.admission.count(.authRefused)
            return refuseAuth(
                connection,
                PublicRouter.text(403, "a protected station's segments need a live pass: load the playlist again\n"),
                reason: "hls request without a live pass", now: now)
        }
        authenticate(
            connection, raw, mount: mount, broadcaster: broadcaster, then: .hls(response, identity: identity),
            request: request, auth: auth)
    }

    /// What tells a player's first playlist request from another's: its station, address, user agent, query and
    /// credentials (the request as it will send it again).
    static func identity(_ raw: HTTPRequestHead.Request, station: String, host: HostKey) -> String {
        let parts = [
            station, "\(host)", raw.field("user-agent") ?? "", raw.query ?? "", raw.field("authorization") ?? "",
        ]
        return parts.joined(separator: "\u{0}")
    }

    /// The player was admitted: its pass, then its playlist naming everything with it.
    func beginPass(
        _ connection: HTTPConnection, _ response: HTTPResponse, identity: String, mount: PublicDirectory.Mount,
        broadcaster: Broadcaster, request: ListenerRequest, session: ListenerSession?
    ) {
        let now = monotonicNow()
        let fromAddress = passesByAddress[connection.hostKey, default: 0]
        guard hlsPasses.count < Self.maxPasses, fromAddress < Self.maxPassesPerAddress, let stream = mount.hls else {
            session?.end(.notServed, now: now)
            broadcaster.admission.count(.authUnavailable)
            return refuseAuth(connection, Self.unavailable, reason: "too many HLS passes", now: now)
        }
        var generator = SystemRandomNumberGenerator()
        let pass = (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
        if let old = hlsIdentities[identity] { endPass(old, .left, now: now) }
        // Its end: the backend's time limit, or the station's session limit, whichever comes first.
        let limit = broadcaster.configuration.maxListenerDuration
        let endsAt = min(session?.endsAt ?? .infinity, limit > 0 ? now + limit : .infinity)
        hlsPasses[pass] = HLSPass(
            station: mount.station, host: connection.hostKey, identity: identity, lastUsed: now, endsAt: endsAt,
            session: session)
        hlsIdentities[identity] = pass
        passesByAddress[connection.hostKey] = fromAddress + 1
        let key = HLSSessions.Key(host: connection.hostKey, agent: "#" + pass)
        answer(
            connection, Self.stamped(response, pass: pass), key: key, request: request, mount: mount, stream: stream,
            broadcaster: broadcaster)
    }

    /// The pass a request's query carries (`pass=` and 32 hex digits), if any.
    static func pass(in query: String?) -> String? {
        guard let query, query.utf8.count <= 2048 else { return nil }
        for item in query.split(separator: "&") where item.hasPrefix(passName + "=") {
            let value = item.dropFirst(passName.utf8.count + 1)
            guard value.utf8.count == 32, value.utf8.allSatisfy({ PercentEncoding.hexValue($0) != nil }) else {
                return nil
            }
            return String(value)
        }
        return nil
    }

    /// A protected station's answer: its playlists naming everything with the pass, no validator to share, and
    /// `private` (a segment keeps its lifetime).
    static func stamped(_ response: HTTPResponse, pass: String) -> HTTPResponse {
        var response = response
        let playlist = response.headers.contains { $0.0 == "Content-Type" && $0.1 == PublicRouter.playlistType }
        response.headers = response.headers.compactMap { name, value in
            if playlist && (name == "ETag" || name == "Last-Modified") { return nil }
            if name == "Cache-Control" {
                return (name, playlist ? "private, no-cache" : value.replacingPublic())
            }
            return (name, value)
        }
        if playlist && response.status == 200 {
            response.body = HLSPlaylist.stamped(response.body, query: "\(passName)=\(pass)")
        }
        return response
    }

    private func refused(_ decision: AdmissionDecision, _ connection: HTTPConnection) -> HTTPResponse {
        http.logLimited(
            .refused, now: monotonicNow(), "http: hls listener \(connection.peer) refused: \(decision.reason)")
        return PublicRouter.notAdmitted(decision)
    }

    /// Ends the sessions whose window is over (every one with `all`, at the stop), and the passes unused as long.
    func endSessions(now: Double, all: Bool = false) {
        var ended: Set<ListenerID> = []
        for (id, held) in hlsStreams {
            for session in held.stream.endSessions(now: now, all: all) {
                endSession(session, of: held.broadcaster)
                ended.insert(session.entry.id)
            }
            if held.stream.sessionsKept == 0 { hlsStreams[id] = nil }
        }
        if !ended.isEmpty, !hlsMoves.isEmpty { hlsMoves = hlsMoves.filter { !ended.contains($0.value.move.id) } }
        for (pass, held) in hlsPasses where all || !(now - held.lastUsed < HLSSessions.window) {
            endPass(pass, all ? .stopped : .left, now: now)
        }
    }

    /// Ends HLS session `id` (an admin's kick): its access-log line, and its pass revoked, so that a protected
    /// player must be admitted again. A player without a pass holds no connection: its next playlist request starts
    /// a new session. False: no such session.
    func kickHLS(_ id: ListenerID, now: Double) -> Bool {
        var found = false
        for held in hlsStreams.values {
            guard let session = held.stream.endSession(id: id) else { continue }
            endSession(session, of: held.broadcaster)
            found = true
        }
        for (pass, held) in hlsPasses where held.session?.id == id { endPass(pass, .kicked, now: now) }
        return found
    }

    /// A pass is over: forgotten, and its session's remove sent.
    private func endPass(_ pass: String, _ reason: SessionEnd, now: Double) {
        guard let held = hlsPasses.removeValue(forKey: pass) else { return }
        if hlsIdentities[held.identity] == pass { hlsIdentities[held.identity] = nil }
        let left = passesByAddress[held.host, default: 1] - 1
        passesByAddress[held.host] = left > 0 ? left : nil
        // Its time listening: to its last request (the window after it is only how long it may take to come back).
        held.session?.end(reason, now: min(now, held.lastUsed))
    }

    /// A session ended: out of the roster, and its access-log line (time connected: to its last answer).
    func endSession(_ session: HLSSessions.Session, of broadcaster: Broadcaster) {
        let entry = session.entry
        broadcaster.admission.leave(entry)
        broadcaster.audience.release()
        let seconds = max(0, session.lastSeen - session.arrived)
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

/// A protected station's HLS player, admitted once: its station, the address it was admitted from, its last request
/// and its session with the backend.
struct HLSPass {
    let station: String
    let host: HostKey
    /// The first playlist request it was given for (`HTTPFrontLoop.identity`).
    let identity: String
    var lastUsed: Double
    /// When its session is over (monotonic seconds; infinity: never).
    let endsAt: Double
    let session: ListenerSession?
}

extension String {
    /// A `Cache-Control` value with `public` made `private`.
    fileprivate func replacingPublic() -> String {
        split(separator: ",").map { String($0).trimmingWhitespace() }.map { $0 == "public" ? "private" : $0 }
            .joined(separator: ", ")
    }
}
