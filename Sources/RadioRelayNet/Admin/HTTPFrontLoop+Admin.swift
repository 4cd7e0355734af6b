import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Icecast's admin API on the public HTTP address (`/admin/COMMAND`): `AdminGate` decides who may call, then the
/// call is answered here — the reading ones from the directory and the listener roster (`IcecastAdmin`), `killclient`
/// by closing the listener where it is served, `metadata` and `killsource` through the station's source desk.
extension HTTPFrontLoop {
    /// - Parameters: `directory` and `broadcasters`: the front end's, as the request was routed with them.
    func handleAdmin(
        _ connection: HTTPConnection, _ request: HTTPRequestHead.Request, directory: PublicDirectory,
        broadcasters: [Broadcaster]
    ) {
        if request.path == AdminPage.path {
            return handleAdminPage(connection, request, directory: directory, broadcasters: broadcasters)
        }
        guard let call = AdminCall.parse(path: request.path, query: request.query) else {
            return answer(connection, IcecastAdmin.failure(400, "Unrecognised command", format: .xml))
        }
        guard request.method == "GET" || request.method == "POST" else {
            var response = PublicRouter.text(405, "only GET and POST\n")
            response.headers.append(("Allow", "GET, POST"))
            return answer(connection, response)
        }
        let now = monotonicNow()
        let desk = call.mount.flatMap { front.sourceDesk(at: $0) }
        let decision = front.adminGate.decide(
            call, request, source: desk.flatMap { $0.takesSources ? $0.gateStation : nil }, accounts: front.accounts,
            lockout: lockout, host: connection.hostKey, now: now)
        let refusal = IcecastAdmin.failure(403, "Cross-site request refused", format: call.format)
        if refused(decision, connection, what: "/admin/\(call.command.rawValue)", crossSite: refusal, now: now) {
            return
        }
        switch decision {
        case .crossSite, .missing, .wrong, .lockedOut:
            break
        case .source:
            guard let desk else {
                return answer(connection, SourceRules.adminAnswer(400, "Source does not exist"))
            }
            // A bar is the admin's to set.
            if call.ban != nil { return answer(connection, IcecastAdmin.unauthorized()) }
            deskCall(connection, call, method: request.method, desk: desk)
        case .dj(_, let name):
            guard let desk else {
                return answer(connection, SourceRules.adminAnswer(400, "Source does not exist"))
            }
            if call.ban != nil { return answer(connection, IcecastAdmin.unauthorized()) }
            // A DJ titles their own set only (with nobody on the air the desk answers "Source does not exist").
            if call.command == .metadata, let user = desk.onAir, user != .dj(name) {
                return answer(connection, SourceRules.adminAnswer(403, "Another source is on the air"))
            }
            deskCall(connection, call, method: request.method, desk: desk)
        case .admin:
            perform(
                call, connection, request, desk: desk, directory: directory, broadcasters: broadcasters, now: now)
        }
    }

    /// Answers (and logs) the gate's refusals: 403 `crossSite` to another site's page, 401 with the challenge, 401
    /// counted against the address for wrong credentials, 429 while it is locked out. False when the gate let the
    /// caller through. `what`: the path asked for, for the log.
    func refused(
        _ decision: AdminGate.Decision, _ connection: HTTPConnection, what: String, crossSite: HTTPResponse,
        now: Double
    ) -> Bool {
        switch decision {
        case .crossSite:
            http.logLimited(.source, now: now, "http: \(connection.peer) refused 403: a cross-site \(what) request")
            answer(connection, crossSite)
        case .missing:
            answer(connection, IcecastAdmin.unauthorized())
        case .wrong(let key):
            let count = lockout.failed(key, now: now)
            http.logLimited(
                .source, now: now,
                "http: \(connection.peer) refused 401: wrong credentials for \(what) "
                    + "(\(key.scope): \(count) in the last minute; 429 after \(SourceLockout.limit))")
            answer(connection, IcecastAdmin.unauthorized())
        case .lockedOut(let wait):
            answer(connection, Self.lockedOut(wait))
        case .admin, .source, .dj:
            return false
        }
        return true
    }

    /// An admin's call, answered: by the API as it is, by the admin page's form (`HTTPFrontLoop+AdminPage`) through
    /// `shape`, which turns the answer into the page's redirect — one implementation of each call for both.
    func perform(
        _ call: AdminCall, _ connection: HTTPConnection, _ request: HTTPRequestHead.Request, desk: SourceDesk?,
        directory: PublicDirectory, broadcasters: [Broadcaster], now: Double,
        shape: @escaping (HTTPResponse) -> HTTPResponse = { $0 }
    ) {
        let answer = { [unowned self] (connection: HTTPConnection, response: HTTPResponse) in
            self.answer(connection, shape(response))
        }
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
            return answer(connection, IcecastAdmin.failure(400, "Unknown admin request", format: call.format))
        }
        switch call.command {
        case .stats: answer(connection, IcecastAdmin.stats(view, request: request, format: call.format))
        case .listmounts: answer(connection, IcecastAdmin.listMounts(view, format: call.format))
        case .listclients: answer(connection, IcecastAdmin.listClients(view, call, format: call.format))
        case .killclient:
            answer(
                connection,
                killClient(call, directory: directory, roster: roster, broadcasters: broadcasters, now: now))
        case .moveclients:
            moveClients(
                call, connection, directory: directory, roster: roster, broadcasters: broadcasters, view: view,
                shape: shape)
        case .metadata, .killsource:
            guard let desk else {
                return answer(connection, IcecastAdmin.failure(400, "Source does not exist", format: call.format))
            }
            if call.command == .killsource, let ban = call.ban {
                guard case .value(let seconds) = ban, seconds <= AdminCall.maxBan else {
                    return answer(connection, IcecastAdmin.failure(400, "Bad parameter: ban", format: call.format))
                }
                applyBan(seconds, desk: desk, now: now)
            }
            deskCall(connection, call, method: request.method, desk: desk, shape: shape)
        }
    }

    /// `killsource?ban=SECONDS`: a DJ on the air bars the DJ's account (on every station); the station's own
    /// `source` on the air, or none, bars the station. `ban=0` lifts the station's bar and those of its DJs.
    private func applyBan(_ seconds: Int, desk: SourceDesk, now: Double) {
        if seconds > 0, case .dj(let name)? = desk.onAir {
            _ = front.changeAccounts { $0.bar(name, for: seconds, now: now) }
            Log.notice(
                "admin: DJ \(name) refused on every station for \(seconds) s (killsource ban on \(desk.station))")
            return
        }
        desk.bar(for: seconds, now: now)
        if seconds > 0 {
            Log.notice("admin: station \(desk.station) refuses live sources for \(seconds) s (killsource ban)")
            return
        }
        let lifted = front.changeAccounts { $0.lift(station: desk.station) }
        Log.notice(
            "admin: station \(desk.station)'s bar lifted"
                + (lifted.isEmpty ? "" : ", and DJ \(lifted.joined(separator: ", "))'s") + " (killsource ban=0)")
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
    func deskCall(
        _ connection: HTTPConnection, _ call: AdminCall, method: String, desk: SourceDesk,
        shape: @escaping (HTTPResponse) -> HTTPResponse = { $0 }
    ) {
        let path = "/admin/" + call.command.rawValue
        switch SourceRules.admin(method: method, path: path, parameters: call.parameters, desk: desk) {
        case .respond(let response):
            answer(connection, shape(response))
        case .command(let command):
            guard let ticket = desk.commands.submit(command) else {
                return answer(connection, shape(SourceRules.adminAnswer(503, "Too many requests: try again")))
            }
            http.await(connection, ticket) { shape(SourceRules.killAnswer($0)).encoded }
        }
    }
}
