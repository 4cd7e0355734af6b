import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// Live sources on the public HTTP address, as Icecast takes them: `PUT` (Icecast 2.4, `Expect: 100-continue`, the
/// audio until the connection closes) and `SOURCE` (older clients), HTTP Basic with user `source` and the station's
/// `source_password`, or a DJ account's user and password (`SourceGate` decides), to `/NAME` or one of the station's
/// mounts (the admin calls a source makes, `/admin/metadata` and `/admin/killsource`, are `HTTPFrontLoop+Admin`'s).
/// What is answered is `SourceRules`' decision; an accepted source's socket leaves this loop for its station's
/// pipeline (through the station's `SourceDesk`, with who it is), so no limit on unfinished requests can touch it
/// from then on.
extension HTTPFrontLoop {
    func handleSourceProtocol(_ connection: HTTPConnection, _ request: HTTPRequestHead.Request) {
        let now = monotonicNow()
        guard let desk = front.sourceDesk(at: request.path) else {
            let what = Sanitized.text(request.path, limit: 128)
            return answer(connection, PublicRouter.text(404, "no station takes a live source at \(what)\n"))
        }
        // Failures count against this station (and account) from this address only (`SourceGate`).
        let decision = SourceGate.decide(
            request.field("authorization"), station: desk.gateStation, accounts: front.accounts,
            stationBar: desk.barred(now: now), lockout: lockout, host: connection.hostKey, now: now,
            wallClock: wallClockNow())
        switch decision {
        case .accepted(let user):
            acceptSource(connection, request, desk: desk, user: user, now: now)
        case .missing:
            answer(connection, SourceRules.unauthorized())
        case .lockedOut(let wait):
            http.logLimited(
                .source, now: now,
                "http: \(connection.peer) refused 429: too many failed source logins for station \(desk.station)")
            answer(connection, Self.lockedOut(wait))
        case .wrong(let key):
            let count = lockout.failed(key, now: now)
            http.logLimited(
                .source, now: now,
                "http: \(connection.peer) refused 401: wrong source credentials for station \(desk.station) "
                    + "(\(key.scope): \(count) in the last minute; 429 after \(SourceLockout.limit))")
            answer(connection, SourceRules.unauthorized())
        case .refused(let refusal):
            var response = PublicRouter.text(403, refusal.answer)
            if let seconds = refusal.retryAfter { response.headers.append(("Retry-After", "\(seconds)")) }
            http.logLimited(
                .source, now: now,
                "http: live source for \(desk.station) from \(connection.peer) refused 403: \(refusal.reason)")
            answer(connection, response)
        }
    }

    private func acceptSource(
        _ connection: HTTPConnection, _ request: HTTPRequestHead.Request, desk: SourceDesk, user: SourceUser,
        now: Double
    ) {
        if let refusal = SourceRules.refusal(request) {
            http.logLimited(
                .source, now: now,
                "http: live source for \(desk.station) from \(connection.peer) refused \(refusal.status): "
                    + refusal.textBody.trimmingSuffixNewline)
            return answer(connection, refusal)
        }
        guard !desk.isOccupied else {
            http.logLimited(
                .source, now: now,
                "http: live source for \(desk.station) from \(connection.peer) refused 403: a source is on the air")
            return answer(connection, PublicRouter.text(403, "Mountpoint in use\n"))
        }
        do {
            try http.loop.epoll.remove(connection.fd)
        } catch {
            Log.warning("http: \(connection.peer): \(error)")
            return http.close(connection)
        }
        let early = connection.afterHead
        http.close(connection)  // forgotten here: the socket goes to the station
        guard let socket = connection.takeSocket() else { return }
        var described = SourceRules.describe(request)
        let expects = request.method == "PUT" && request.field("expect")?.lowercased() == "100-continue"
        described.mayAnswer = expects
        sendBestEffort(SourceRules.acceptance(request, continues: expects), on: socket.rawValue)
        let source = LiveSource(
            socket: socket, peer: connection.peer, request: described, early: early, stallTimeout: desk.timeout,
            user: user)
        // The station's pipeline logs the connection when it takes it (one line per connect).
        if !desk.deliver(Handoff(value: source), info: described.info, user: user) { source.close() }
    }

    /// 429 to an address with too many failed logins (`SourceLockout`), with when to try again.
    static func lockedOut(_ wait: Double) -> HTTPResponse {
        var response = PublicRouter.text(429, "too many failed logins from this address: try again later\n")
        response.headers.append(("Retry-After", "\(Int(wait.rounded(.up)))"))
        return response
    }

    /// Sends `response` and closes: the answers of the source protocol and the admin calls.
    func answer(_ connection: HTTPConnection, _ response: HTTPResponse) {
        var response = response
        response.keepAlive = false
        http.respond(connection, head: response.encodedHead, body: response.payload, keepAlive: false)
    }
}

extension HTTPResponse {
    /// The body as text (for a log line).
    package var textBody: String { String(decoding: payload, as: UTF8.self) }
}

extension String {
    var trimmingSuffixNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}
