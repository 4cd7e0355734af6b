import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// The admin page on the public HTTP address (`/admin/`): `GET` shows it (`AdminPage`), `POST` takes one of its
/// forms. Who may is the admin API's rule (`AdminGate.decidePage`: the admin's Basic credentials, the same lockout),
/// and a form is refused 403 when it comes from another site's page whatever it carries, or without the cookie and
/// token of a session this page opened (`AdminSessions`). A form's body (`AdminForm`: at most 8 KiB, within the
/// head's deadline) is read here; the form is then the admin call it names, carried out by the API's own code
/// (`perform`), or a station command as the status endpoint sends it, and answered with 303 back to the page, whose
/// next load shows what it did.
extension HTTPFrontLoop {
    func handleAdminPage(
        _ connection: HTTPConnection, _ request: HTTPRequestHead.Request, directory: PublicDirectory,
        broadcasters: [Broadcaster]
    ) {
        let posting = request.method == "POST"
        guard posting || request.method == "GET" || request.method == "HEAD" else {
            var response = PublicRouter.text(405, "only GET, HEAD and POST\n")
            response.headers.append(("Allow", "GET, HEAD, POST"))
            return answer(connection, response)
        }
        let now = monotonicNow()
        let decision = front.adminGate.decidePage(
            request, changesState: posting, lockout: lockout, host: connection.hostKey, now: now)
        let crossSite = Self.refusal(403, "A form from another site is refused.")
        guard !refused(decision, connection, what: AdminPage.path, crossSite: crossSite, now: now) else { return }
        // The page is the admin's alone (the gate lets no source through here).
        guard decision == .admin else { return answer(connection, IcecastAdmin.unauthorized()) }
        if posting { return beginForm(connection, request) }
        showPage(connection, request, directory: directory, broadcasters: broadcasters, now: now)
    }

    private func showPage(
        _ connection: HTTPConnection, _ request: HTTPRequestHead.Request, directory: PublicDirectory,
        broadcasters: [Broadcaster], now: Double
    ) {
        var random = SystemRandomNumberGenerator()
        let (session, isNew) = adminSessions.open(cookie: Self.cookie(request), now: now, random: &random)
        let roster = broadcasters.first?.admission.roster
        let mounts = directory.mounts.map { mount in
            let listed = roster?.listeners(of: mount.path, limit: AdminPage.listedPerMount) ?? (entries: [], total: 0)
            return AdminPage.MountListeners(mount: mount, listeners: listed.entries, total: listed.total)
        }
        let view = AdminPage.View(
            stations: front.stations.map(\.adminView), mounts: mounts, histories: directory.histories,
            token: session.token, flash: adminSessions.takeFlash(cookie: session.id), now: now)
        let nonce = AdminSessions.randomHex(&random)
        var response = HTTPResponse(
            status: 200, contentType: "text/html; charset=utf-8", body: AdminPage.html(view, nonce: nonce))
        response.headers +=
            Self.pageHeaders + [("Content-Security-Policy", AdminPage.contentSecurityPolicy(nonce: nonce))]
        if isNew { response.headers.append(("Set-Cookie", AdminSessions.setCookie(session))) }
        response.omitsBody = request.method == "HEAD"
        answer(connection, response)
    }

    /// A form's head was taken: its body is read (now, when it came with the head), bounded.
    private func beginForm(_ connection: HTTPConnection, _ request: HTTPRequestHead.Request) {
        switch AdminForm.body(request) {
        case .notForm: answer(connection, Self.refusal(415, "A form of this page is sent as \(AdminForm.contentType)."))
        case .unframed: answer(connection, Self.refusal(411, "A form needs a Content-Length."))
        case .tooLarge: answer(connection, Self.refusal(413, "A form is at most \(AdminForm.maxBytes) bytes."))
        case .length(let length):
            let early = Array(connection.afterHead.prefix(length))
            connection.afterHead = []
            guard early.count < length else { return takeForm(connection, request, body: early) }
            // A client that waits to be asked for its body (curl does past 1 KiB) is asked at once.
            if request.field("expect")?.lowercased() == "100-continue" {
                sendBestEffort(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), on: connection.fd)
            }
            formWaits[connection.fd] = AdminForm.Wait(request: request, length: length, body: early)
            readForm(connection, mask: 0)
        }
    }

    /// Reads what came of a form's body; takes the form once it is whole. The connection's deadline (the head's)
    /// still runs: a body that never comes is closed with it.
    func readForm(_ connection: HTTPConnection, mask: UInt32) {
        guard var wait = formWaits[connection.fd] else { return }
        while wait.body.count < wait.length {
            let room = min(http.loop.scratch.count, wait.length - wait.body.count)
            guard let result = http.read(connection.fd, room: room) else { return http.close(connection) }
            guard case .done(let count) = result else { break }
            if count == 0 { return http.close(connection) }  // gone before its whole form
            wait.body += http.loop.scratch[0..<count]
        }
        guard wait.body.count >= wait.length else {
            formWaits[connection.fd] = wait
            if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { http.close(connection) }
            return
        }
        formWaits[connection.fd] = nil
        takeForm(connection, wait.request, body: wait.body)
    }

    /// A whole form: its session and token checked, then what it asks done and answered with the way back.
    private func takeForm(_ connection: HTTPConnection, _ request: HTTPRequestHead.Request, body: [UInt8]) {
        let now = monotonicNow()
        let fields = AdminForm.fields(body) ?? [:]
        let cookie = Self.cookie(request)
        let check = adminSessions.check(cookie: cookie, token: fields["token"], now: now)
        guard check == .accepted else {
            http.logLimited(.source, now: now, "http: \(connection.peer) refused 403: admin page form: \(check.reason)")
            return answer(connection, Self.refusal(403, "Refused: \(check.reason). Load the page again and retry."))
        }
        // The stations as they are now: the body came after the head was routed.
        let (directory, broadcasters) = front.directory()
        let back = { [unowned self] (response: HTTPResponse) -> HTTPResponse in
            adminSessions.setFlash(Self.outcome(response), cookie: cookie)
            var redirect = PublicRouter.text(303, "see \(AdminPage.path)\n")
            redirect.headers += [("Location", AdminPage.path), ("Cache-Control", "no-store")]
            return redirect
        }
        switch AdminForm.action(fields) {
        case .invalid(let reason):
            answer(connection, back(PublicRouter.text(400, reason)))
        case .call(let call):
            let desk = call.mount.flatMap { front.sourceDesk(at: $0) }
            perform(
                call, connection, request, desk: desk, directory: directory, broadcasters: broadcasters, now: now,
                shape: back)
        case .station(let name, let command):
            guard let station = front.stations.first(where: { $0.songHistory.station == name }) else {
                return answer(connection, back(PublicRouter.text(404, "no station \(Sanitized.text(name, limit: 64))")))
            }
            do {
                let ticket = try station.submit(command)
                Log.notice("admin: page: station \(name): \(command)")
                http.await(connection, ticket) { back(Self.commandAnswer($0)).encoded }
            } catch {
                answer(connection, back(PublicRouter.text(404, error.message)))
            }
        }
    }

    /// A station command's outcome as an answer (the status endpoint's words).
    static func commandAnswer(_ outcome: CommandOutcome?) -> HTTPResponse {
        var response: HTTPResponse
        switch outcome {
        case .done(let text): response = PublicRouter.text(200, text)
        case .refused(let text): response = PublicRouter.text(404, text)
        case nil: response = PublicRouter.text(503, "the station did not answer: try again")
        }
        response.summary = response.textBody
        return response
    }

    /// The page's line for an answer: its message, with its status when it is not a success.
    static func outcome(_ response: HTTPResponse) -> String {
        let words = response.summary ?? response.textBody.trimmingSuffixNewline
        let line = Sanitized.text(words, limit: 300)
        return (200..<300).contains(response.status) ? line : "\(line) (\(response.status))"
    }

    /// The session the request's cookie names.
    static func cookie(_ request: HTTPRequestHead.Request) -> String? {
        AdminSessions.cookieID(request.fields.filter { $0.name == "cookie" }.map(\.value))
    }

    static let pageHeaders = [
        ("X-Frame-Options", "DENY"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin"),
    ]

    /// A refused form: a short page with the way back.
    static func refusal(_ status: Int, _ message: String) -> HTTPResponse {
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1"><title>Refused</title></head>\
            <body><h1>\(status) \(HTTPResponse.reason(status))</h1><p>\(Markup.escape(message))</p>\
            <p><a href="\(AdminPage.path)">Back to the admin page</a></p></body></html>

            """
        var response = HTTPResponse(status: status, contentType: "text/html; charset=utf-8", body: html)
        response.headers += pageHeaders + [("Content-Security-Policy", "default-src 'none'")]
        response.summary = message
        return response
    }
}
