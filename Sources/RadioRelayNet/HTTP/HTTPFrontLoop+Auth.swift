import RadioRelayMedia
import RadioRelaySystem

/// A protected station's stream listeners (`ListenerAuthentication`): after the rules and access lists (a listener
/// they refuse costs no call), the htpasswd file and then the backend are asked, off this loop
/// (`Authenticator`); the connection waits parked — not read, not pending, closed at its deadline — until the
/// verdict comes back through `HTTPFront.deliver`, then is handed to its station with its session (`ListenerSession`)
/// and the backend's time limit, or answered: `401` with a Basic challenge (a player with credentials in its URL
/// sends them then), or `503` when the backend could not answer (`auth_failure = refuse`) or too many wait.
extension HTTPFrontLoop {
    /// What an admitted listener gets: its stream (this response head first), or an HLS player its playlist
    /// with a pass (`HTTPFrontLoop+HLS`).
    enum AuthThen {
        case stream(head: [UInt8])
        case hls(HTTPResponse, identity: String)
    }

    /// A listener waiting for its verdict.
    struct AuthWait {
        let connection: HTTPConnection
        let mount: PublicDirectory.Mount
        let broadcaster: Broadcaster
        let then: AuthThen
        let request: ListenerRequest
        let failure: ListenerAuthentication.Failure
    }

    /// Whether the stream request needs a verdict first: then it is asked for (or answered at once) and true.
    func authenticates(
        _ connection: HTTPConnection, _ raw: HTTPRequestHead.Request, mount: PublicDirectory.Mount,
        broadcaster: Broadcaster, head: [UInt8], request: ListenerRequest
    ) -> Bool {
        guard let auth = broadcaster.admission.policy.authentication[mount.station], auth.isOn else { return false }
        authenticate(
            connection, raw, mount: mount, broadcaster: broadcaster, then: .stream(head: head), request: request,
            auth: auth)
        return true
    }

    /// Asks for a protected station's verdict on a listener (its rules and access lists first), or answers at once.
    func authenticate(
        _ connection: HTTPConnection, _ raw: HTTPRequestHead.Request, mount: PublicDirectory.Mount,
        broadcaster: Broadcaster, then: AuthThen, request: ListenerRequest, auth: ListenerAuthentication
    ) {
        let admission = broadcaster.admission
        let now = monotonicNow()
        let ask = AdmissionAsk(
            station: mount.station, mount: mount.path, kind: .http, client: connection.peer, request: request)
        if let decision = admission.screen(ask) {
            return refuseAuth(connection, PublicRouter.notAdmitted(decision), reason: decision.reason, now: now)
        }
        let credentials = ListenerCredentials.basic(raw.field("authorization"))
        let call = AuthCall(
            action: .add, server: front.serverName, port: Int(front.address.port), client: .next(),
            mount: raw.path + (raw.query.map { "?" + $0 } ?? ""), credentials: credentials,
            ip: ListenerAdmission.shownAddress(connection.peer), agent: raw.field("user-agent") ?? "")
        let authenticator = admission.authenticator
        if auth.addURL == nil && credentials == nil {
            admission.count(.authRefused)
            return refuseAuth(connection, Self.challenge(mount.station, nil), reason: "no credentials", now: now)
        }
        let ticket = nextAuthTicket
        nextAuthTicket &+= 1
        let front = self.front
        let host = connection.hostKey
        /// The backend's verdict, with the session its `admitted` opens.
        let askBackend: @Sendable () -> String? = {
            guard let url = auth.addURL else { return nil }
            return authenticator.add(call, url: url, header: auth.header, timeout: auth.timeout, from: host) {
                verdict in
                var session: ListenerSession?
                if case .admitted(let limit) = verdict {
                    session = ListenerSession(
                        call: call, removeURL: auth.removeURL, timeout: auth.timeout, authenticator: authenticator,
                        began: monotonicNow(), timeLimit: limit)
                }
                front.deliver(AuthDelivery(ticket: ticket, verdict: verdict, session: session))
            }
        }
        let refusal: String?
        if let file = auth.htpasswd, let credentials {
            refusal = authenticator.check(credentials, in: file, timeout: auth.timeout) { verdict in
                if case .refused = verdict, auth.addURL != nil, let refusal = askBackend() {
                    front.deliver(AuthDelivery(ticket: ticket, verdict: .failed(refusal), session: nil))
                } else if case .refused = verdict, auth.addURL != nil {
                    return  // the backend's verdict follows
                } else {
                    front.deliver(AuthDelivery(ticket: ticket, verdict: verdict, session: nil))
                }
            }
        } else {
            refusal = askBackend()
        }
        if let refusal {
            admission.count(.authUnavailable)
            return refuseAuth(connection, Self.unavailable, reason: refusal, now: now)
        }
        guard http.park(connection, until: now + auth.timeout + 2) else { return }
        authWaits[ticket] = AuthWait(
            connection: connection, mount: mount, broadcaster: broadcaster, then: then, request: request,
            failure: auth.failure)
    }

    /// Acts on the verdicts delivered since the last look.
    func settleAuthentications() {
        let delivered = front.verdicts.withLock { box in
            defer { box.due = [] }
            return box.due
        }
        for delivery in delivered { settle(delivery) }
    }

    private func settle(_ delivery: AuthDelivery) {
        let now = monotonicNow()
        guard let wait = authWaits.removeValue(forKey: delivery.ticket) else {
            delivery.session?.end(.left, now: now)
            return
        }
        let connection = wait.connection
        let admission = wait.broadcaster.admission
        guard http.connections[connection.fd] === connection else {
            // It closed, or its deadline passed, while it waited.
            delivery.session?.end(.left, now: now)
            return
        }
        switch delivery.verdict {
        case .admitted:
            admitted(wait, session: delivery.session)
        case .failed(let why) where wait.failure == .admit:
            logAuth(connection, "admitted unchecked (auth_failure = admit): \(why)", now: now)
            admitted(wait, session: nil)
        case .failed(let why):
            admission.count(.authUnavailable)
            guard http.unpark(connection) else { return }
            refuseAuth(connection, Self.unavailable, reason: why, now: now)
        case .refused(let message):
            admission.count(.authRefused)
            guard http.unpark(connection) else { return }
            refuseAuth(
                connection, Self.challenge(wait.mount.station, message), reason: message ?? "credentials refused",
                now: now)
        }
    }

    private func admitted(_ wait: AuthWait, session: ListenerSession?) {
        switch wait.then {
        case .stream(let head):
            handOver(
                wait.connection, to: wait.broadcaster, mount: wait.mount, head: head, request: wait.request,
                session: session)
        case .hls(let response, let identity):
            guard http.unpark(wait.connection) else {
                session?.end(.left)
                return
            }
            beginPass(
                wait.connection, response, identity: identity, mount: wait.mount, broadcaster: wait.broadcaster,
                request: wait.request, session: session)
        }
    }

    /// `401` with a Basic challenge naming the station, and the backend's message.
    static func challenge(_ station: String, _ message: String?) -> HTTPResponse {
        var response = PublicRouter.text(401, (message ?? "authentication refused") + "\n")
        response.headers.append(("WWW-Authenticate", "Basic realm=\"\(station)\", charset=\"UTF-8\""))
        return response
    }

    static let unavailable = PublicRouter.text(503, "authentication unavailable, try again later\n")

    func refuseAuth(_ connection: HTTPConnection, _ response: HTTPResponse, reason: String, now: Double) {
        logAuth(connection, "refused (\(response.status)): \(reason)", now: now)
        var answer = response
        answer.keepAlive = false
        send(answer, on: connection)
    }

    private func logAuth(_ connection: HTTPConnection, _ what: String, now: Double) {
        http.logLimited(.refused, now: now, "http: listener \(connection.peer) \(Sanitized.text(what, limit: 300))")
    }
}
