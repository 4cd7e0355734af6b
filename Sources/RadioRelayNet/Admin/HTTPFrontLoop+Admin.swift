import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Icecast's admin API on the public HTTP address (`/admin/COMMAND`): `AdminGate` decides who may call, then the
/// call is answered here — the reading ones from the directory and the listener roster (`IcecastAdmin`), `killclient`
/// by closing the listener where it is served, `metadata` and `killsource` through the station's source desk.
extension HTTPFrontLoop {
    func handleAdmin(_ connection: HTTPConnection, _ request: HTTPRequestHead.Request) {
        guard let call = AdminCall.parse(path: request.path, query: request.query) else {
            return answerAdmin(connection, IcecastAdmin.failure(400, "Unrecognised command", format: .xml))
        }
        guard request.method == "GET" || request.method == "POST" else {
            var response = PublicRouter.text(405, "only GET and POST\n")
            response.headers.append(("Allow", "GET, POST"))
            return answerAdmin(connection, response)
        }
        let now = monotonicNow()
        let desk = call.mount.flatMap { front.sourceDesk(at: $0) }
        let source = desk.flatMap { desk in desk.password.map { (station: desk.station, password: $0) } }
        let decision = front.adminGate.decide(
            call, request, source: source, lockout: lockout, host: connection.hostKey, now: now)
        switch decision {
        case .crossSite:
            http.logLimited(
                .source, now: now, "http: \(connection.peer) refused 403: a cross-site \(call.command.rawValue) call")
            answerAdmin(connection, IcecastAdmin.failure(403, "Cross-site request refused", format: call.format))
        case .missing:
            answerAdmin(connection, IcecastAdmin.unauthorized())
        case .wrong(let key):
            let count = lockout.failed(key, now: now)
            http.logLimited(
                .source, now: now,
                "http: \(connection.peer) refused 401: wrong credentials for /admin/\(call.command.rawValue) "
                    + "(\(key.scope): \(count) in the last minute; 429 after \(SourceLockout.limit))")
            answerAdmin(connection, IcecastAdmin.unauthorized())
        case .lockedOut(let wait):
            var response = PublicRouter.text(429, "too many failed logins from this address: try again later\n")
            response.headers.append(("Retry-After", "\(Int(wait.rounded(.up)))"))
            answerAdmin(connection, response)
        case .source:
            guard let desk else {
                return answerAdmin(connection, SourceRules.adminAnswer(400, "Source does not exist"))
            }
            // A bar is the admin's to set.
            if call.ban != nil { return answerAdmin(connection, IcecastAdmin.unauthorized()) }
            deskCall(connection, request, desk: desk)
        case .admin:
            perform(call, connection, request, desk: desk, now: now)
        }
    }

    /// An admin's call, answered.
    private func perform(
        _ call: AdminCall, _ connection: HTTPConnection, _ request: HTTPRequestHead.Request, desk: SourceDesk?,
        now: Double
    ) {
        let (directory, broadcasters) = front.directory()
        let roster = broadcasters.first?.admission.roster
        var view = IcecastAdmin.View(
            directory: directory,
            // Only `listclients` lists anyone: the mount's listeners alone are sorted.
            listeners: call.command == .listclients
                ? call.mount.flatMap { roster?.list(mount: $0, limit: IcecastAdmin.maxListed) } ?? [] : [],
            host: request.host.flatMap(IcecastStatus.host) ?? front.address.description, now: now,
            wallClock: wallClockNow())
        view.listenerConnections = broadcasters.reduce(0) { $0 &+ $1.counters.connections.load(ordering: .relaxed) }
        view.sourcesLive = Set(directory.mounts.filter { $0.sourceConnected != nil }.map(\.station)).count
        if call.command.needsMount, call.mount == nil {
            // Icecast's answer: without `mount=` it looks for a server-wide command of that name.
            return answerAdmin(connection, IcecastAdmin.failure(400, "Unknown admin request", format: call.format))
        }
        switch call.command {
        case .stats: answerAdmin(connection, IcecastAdmin.stats(view, request: request, format: call.format))
        case .listmounts: answerAdmin(connection, IcecastAdmin.listMounts(view, format: call.format))
        case .listclients: answerAdmin(connection, IcecastAdmin.listClients(view, call, format: call.format))
        case .killclient:
            answerAdmin(
                connection,
                killClient(call, directory: directory, roster: roster, broadcasters: broadcasters, now: now))
        case .moveclients:
            answerAdmin(
                connection,
                IcecastAdmin.failure(501, "moveclients is not available in this version", format: call.format))
        case .metadata, .killsource:
            guard let desk else {
                return answerAdmin(connection, IcecastAdmin.failure(400, "Source does not exist", format: call.format))
            }
            if call.command == .killsource, let ban = call.ban {
                guard case .value(let seconds) = ban, seconds <= AdminCall.maxBan else {
                    return answerAdmin(connection, IcecastAdmin.failure(400, "Bad parameter: ban", format: call.format))
                }
                desk.bar(for: seconds, now: now)
                Log.notice("admin: station \(desk.station) refuses live sources for \(seconds) s (killsource ban)")
            }
            deskCall(connection, request, desk: desk)
        }
    }

    /// `killclient`: the listener `id` of `mount`, closed where it is served.
    private func killClient(
        _ call: AdminCall, directory: PublicDirectory, roster: ListenerRoster?, broadcasters: [Broadcaster],
        now: Double
    ) -> HTTPResponse {
        // The directory in the broadcasters' order (the view's is sorted by mount).
        guard let mount = call.mount, let index = directory.mount(at: mount) else {
            return IcecastAdmin.failure(400, "Source does not exist", format: call.format)
        }
        guard let given = call.id else { return IcecastAdmin.failure(400, "Missing parameter", format: call.format) }
        // An `id` that is no number is no listener's (Icecast reads it as 0, which none has).
        let id = if case .value(let id) = given { id } else { ListenerID(0) }
        guard let entry = roster?.entry(id), entry.mount == mount else {
            return IcecastAdmin.notDone("Client \(id) not found", format: call.format)
        }
        switch entry.kind {
        case .tcp, .http:
            guard broadcasters[index].kick(id) else {
                return IcecastAdmin.failure(503, "Too many requests: try again", format: call.format)
            }
        case .events:
            guard let connection = http.connections.values.first(where: { $0.listener?.id == id }) else {
                return IcecastAdmin.notDone("Client \(id) not found", format: call.format)
            }
            http.close(connection)
        case .hls:
            guard kickHLS(id, now: now) else {
                return IcecastAdmin.notDone("Client \(id) not found", format: call.format)
            }
        }
        Log.notice("admin: listener #\(id) (\(entry.kind.rawValue) \(entry.address)) of \(mount) kicked")
        return IcecastAdmin.success("Client \(id) removed", format: call.format)
    }

    /// `metadata` and `killsource` on a station's source desk (`SourceRules.admin`).
    func deskCall(_ connection: HTTPConnection, _ request: HTTPRequestHead.Request, desk: SourceDesk) {
        switch SourceRules.admin(request, desk: desk) {
        case .respond(let response):
            answerAdmin(connection, response)
        case .command(let command):
            guard let ticket = desk.commands.submit(command) else {
                return answerAdmin(connection, SourceRules.adminAnswer(503, "Too many requests: try again"))
            }
            http.await(connection, ticket) { SourceRules.killAnswer($0).encoded }
        }
    }

    func answerAdmin(_ connection: HTTPConnection, _ response: HTTPResponse) {
        var response = response
        response.keepAlive = false
        http.respond(connection, head: response.encodedHead, body: response.payload, keepAlive: false)
    }
}
