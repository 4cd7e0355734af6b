import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The admin page as values: its HTML (hostile text escaped, the listener cap), its forms' bodies (bounded, read by
/// bytes), its sessions and form tokens on virtual time, and who may post a form (`AdminGate.decidePage`).
@Suite struct AdminPageTests {
    static let hostile = "<script>alert(1)</script>\"\u{301} onfocus=x '"

    static func entry(_ id: UInt64, mount: String = "/jazz.opus", agent: String? = "mpv", at: Double = 10)
        -> ListenerEntry
    {
        ListenerEntry(
            id: ListenerID(id), place: ListenerMount(station: "jazz", mount: mount, kind: .http),
            address: "192.0.2.\(id % 200)", userAgent: agent, connectedAt: at)
    }

    static func view(listeners: [ListenerEntry] = [], total: Int? = nil, flash: String? = nil) -> AdminPage.View {
        var station = AdminStationView(name: "jazz")
        station.inputs = [
            AdminStationView.Input(name: "live", kind: "live", state: "playing", since: 1_800_000_000, title: hostile),
            AdminStationView.Input(name: "1", kind: "http", state: "standby", reason: hostile, since: 1_800_000_000),
        ]
        station.playing = "live"
        station.forced = "live"
        station.takesSources = true
        station.source = AdminStationView.Source(address: "192.0.2.9:4000", userAgent: hostile, since: 1_800_000_000)
        station.switches = [AdminStationView.Switch(at: 1_800_000_100, from: "1", to: "live", reason: "forced")]
        var history = SongHistory()
        history.record(hostile, at: 1_800_000_200, input: "live")
        let jazz = PublicDirectory.Mount(path: "/jazz.opus", eventsPath: "/jazz/events", station: "jazz")
        let pop = PublicDirectory.Mount(path: "/pop.opus", eventsPath: "/pop/events", station: "pop")
        return AdminPage.View(
            stations: [station, AdminStationView(name: "pop")],
            mounts: [
                AdminPage.MountListeners(mount: jazz, listeners: listeners, total: total ?? listeners.count),
                AdminPage.MountListeners(mount: pop, listeners: [], total: 0),
            ],
            histories: ["jazz": history], token: "0123456789abcdef0123456789abcdef", flash: flash, now: 100)
    }

    @Test func hostileTextIsEscapedEverywhere() {
        let html = AdminPage.html(
            Self.view(listeners: [Self.entry(7, agent: Self.hostile)], flash: Self.hostile), nonce: "n0nce")
        #expect(!html.contains("<script>"), "a title, an agent, a reason or a flash broke out")
        let brokenOut = "\"\u{301} onfocus"
        let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;\u{301} onfocus=x &#39;"
        #expect(!html.contains(brokenOut))
        #expect(html.contains(escaped))
        // The user agent of listener 7, its kick and its move to the other mount.
        #expect(html.contains("<td data-label=\"User agent\" class=\"agent\">&lt;script&gt;"))
        #expect(html.contains("<input type=\"hidden\" name=\"action\" value=\"kill\">"))
        #expect(html.contains("<select id=\"move-7\" name=\"destination\"><option>/pop.opus</option></select>"))
        #expect(html.contains("<label for=\"move-7\">Move to</label>"))
        // Every form carries the token; the forced input is released, the other forced.
        let forms = html.components(separatedBy: "<form method=\"post\" action=\"/admin/\">").count - 1
        let tokens = html.components(separatedBy: "name=\"token\" value=\"0123456789abcdef0123456789abcdef\"").count - 1
        #expect(forms == tokens && forms == 6, "kick, move, release, force, set title, kill source: \(forms)")
        #expect(html.contains("aria-label=\"Release the force of input live\">Release</button>"))
        #expect(html.contains("<th scope=\"col\">User agent</th>") && html.contains("<th scope=\"row\""))
        #expect(html.contains("<p class=\"flash\" role=\"status\">&lt;script&gt;"))
        #expect(html.contains("<style nonce=\"n0nce\">"))
        #expect(html.contains("<label for=\"title-jazz\">Title</label>"))
        #expect(AdminPage.contentSecurityPolicy(nonce: "n0nce").contains("style-src 'nonce-n0nce'"))
        #expect(!html.contains("<script"), "no script at all")
    }

    @Test func listenersAreCappedWithACountOfTheRest() {
        let listed = (1...UInt64(AdminPage.listedPerMount)).map { Self.entry($0) }
        let html = AdminPage.html(Self.view(listeners: listed, total: 19_000), nonce: "n")
        #expect(html.contains("/jazz.opus <small>19000 listeners</small>"))
        #expect(html.contains("and \(19_000 - AdminPage.listedPerMount) more, not listed"))
        #expect(html.components(separatedBy: "value=\"kill\"").count - 1 == AdminPage.listedPerMount)
        // 200 rows of forms stay far from a megabyte.
        #expect(html.utf8.count < 400_000, "\(html.utf8.count) bytes")
        let none = AdminPage.html(Self.view(), nonce: "n")
        #expect(none.contains("No one listening.") && !none.contains("more, not listed"))
    }

    @Test func slashlessAdminIsRedirectedAndThePageIsTheAdminsRoute() {
        func route(_ head: String) -> PublicRouter.Action {
            PublicRouter.route(HTTPRequestHead.parse(Array(head.utf8), limit: 8192), directory: PublicDirectory())
        }
        guard case .respond(let redirect) = route("GET /admin HTTP/1.1\r\nHost: x\r\n\r\n") else {
            Issue.record("/admin is not answered")
            return
        }
        #expect(redirect.status == 301 && redirect.headers.contains { $0 == ("Location", "/admin/") })
        for method in ["GET", "POST", "HEAD"] {
            guard case .admin(let request) = route("\(method) /admin/ HTTP/1.1\r\nHost: x\r\n\r\n") else {
                Issue.record("\(method) /admin/ is not the admin route")
                continue
            }
            #expect(request.path == AdminPage.path)
        }
    }

    @Test func durationsAndTimes() {
        #expect(AdminPage.duration(42) == "42 s" && AdminPage.duration(185) == "3 min 5 s")
        #expect(AdminPage.duration(7_620) == "2 h 07 min")
        #expect(AdminPage.seconds(.infinity) == 0 && AdminPage.seconds(-3) == 0 && AdminPage.seconds(.nan) == 0)
        #expect(AdminPage.time(1_800_000_000) == "<time datetime=\"2027-01-15T08:00:00.000Z\">08:00:00</time>")
    }
}

/// A form's body: framed by its head, bounded, decoded by bytes, and what it asks.
@Suite struct AdminFormTests {
    static func post(_ fields: String) -> HTTPRequestHead.Request {
        let head = "POST /admin/ HTTP/1.1\r\nHost: relay.example\r\n\(fields)\r\n"
        guard case .request(let request) = HTTPRequestHead.parse(Array(head.utf8), limit: 8192) else {
            preconditionFailure("not a request")
        }
        return request
    }

    @Test func theBodyIsFramedAndBounded() {
        let form = "Content-Type: application/x-www-form-urlencoded\r\n"
        #expect(AdminForm.body(Self.post(form + "Content-Length: 42\r\n")) == .length(42))
        #expect(AdminForm.body(Self.post(form + "Content-Length: 8192\r\n")) == .length(8192))
        #expect(AdminForm.body(Self.post(form + "Content-Length: 8193\r\n")) == .tooLarge)
        #expect(AdminForm.body(Self.post(form + "Content-Length: 999999999999999999\r\n")) == .tooLarge)
        #expect(AdminForm.body(Self.post(form + "Content-Length: 12, 12\r\n")) == .length(12))
        #expect(AdminForm.body(Self.post(form)) == .length(0))
        #expect(AdminForm.body(Self.post(form + "Transfer-Encoding: chunked\r\n")) == .unframed)
        #expect(
            AdminForm.body(Self.post("Content-Type: application/x-www-form-urlencoded; charset=UTF-8\r\n"))
                == .length(0))
        #expect(AdminForm.body(Self.post("Content-Type: multipart/form-data; boundary=x\r\n")) == .notForm)
        #expect(AdminForm.body(Self.post("Content-Length: 3\r\n")) == .notForm)
        #expect(AdminForm.fields([UInt8](repeating: 0x61, count: AdminForm.maxBytes + 1)) == nil)
    }

    @Test func fieldsArePercentDecodedByBytes() throws {
        // A title of bytes that are not UTF-8 text on their own, a `+`, an escaped ampersand and a bad escape.
        let body = Array("token=abc&action=metadata&mount=jazz.opus&mode=updinfo&song=A%2BB+%26+C%C3%A9%FF%zz".utf8)
        let fields = try #require(AdminForm.fields(body))
        #expect(fields["song"] == Array("A+B & C".utf8) + [0xC3, 0xA9, 0xFF] + Array("%zz".utf8))
        guard case .call(let call) = AdminForm.action(fields) else {
            Issue.record("not a call")
            return
        }
        #expect(
            call.command == .metadata && call.mount == "/jazz.opus" && call.parameters["mode"] == Array("updinfo".utf8))
        // At most 32 fields are read, whatever the body holds.
        let many = (0..<500).map { "f\($0)=x" }.joined(separator: "&")
        #expect(AdminForm.fields(Array(many.utf8))?.count == 32)
    }

    @Test func actionsAreTheAdminCallsAndStationCommands() {
        func action(_ body: String) -> AdminForm.Action { AdminForm.action(AdminForm.fields(Array(body.utf8)) ?? [:]) }
        guard case .call(let kill) = action("action=kill&mount=%2Fjazz.opus&id=7") else {
            Issue.record("kill is no call")
            return
        }
        #expect(kill.command == .killclient && kill.id == .value(ListenerID(7)) && kill.format == .xml)
        guard case .call(let move) = action("action=move&mount=/jazz.opus&id=7&destination=%2Fpop.opus&format=json")
        else {
            Issue.record("move is no call")
            return
        }
        #expect(move.command == .moveclients && move.destination == "/pop.opus" && move.format == .xml)
        #expect(action("action=force&station=jazz&input=2") == .station("jazz", .force(input: "2")))
        #expect(action("action=release&station=jazz") == .station("jazz", .release))
        if case .call(let call) = action("action=killsource&mount=/jazz.opus") {
            #expect(call.command == .killsource)
        } else {
            Issue.record("killsource is no call")
        }
        for bad in ["action=kill", "action=force&station=jazz", "action=release", "action=stats&mount=/a", ""] {
            guard case .invalid = action(bad) else {
                Issue.record("\(bad) was taken")
                continue
            }
        }
    }
}

/// The session table and its tokens, on virtual time.
@Suite struct AdminSessionsTests {
    @Test func aFormNeedsTheSessionsCookieAndToken() {
        var sessions = AdminSessions()
        var random = SplitMix64(seed: 42)
        let (session, isNew) = sessions.open(cookie: nil, now: 0, random: &random)
        #expect(isNew && session.id.utf8.count == 32 && session.token.utf8.count == 32 && session.id != session.token)
        let token = Array(session.token.utf8)
        #expect(sessions.check(cookie: session.id, token: token, now: 1) == .accepted)
        #expect(sessions.check(cookie: nil, token: token, now: 1) == .unknownSession)
        #expect(sessions.check(cookie: String(repeating: "0", count: 32), token: token, now: 1) == .unknownSession)
        #expect(sessions.check(cookie: session.id, token: nil, now: 1) == .wrongToken)
        #expect(sessions.check(cookie: session.id, token: token.dropLast() + [0x30], now: 1) == .wrongToken)
        #expect(sessions.check(cookie: session.id, token: Array(session.id.utf8), now: 1) == .wrongToken)
        // A later load with the cookie keeps the session and its token.
        let again = sessions.open(cookie: session.id, now: 5, random: &random)
        #expect(!again.isNew && again.session == session && sessions.count == 1)
    }

    @Test func sessionsExpire() {
        var sessions = AdminSessions()
        var random = SplitMix64(seed: 7)
        let session = sessions.open(cookie: nil, now: 100, random: &random).session
        let token = Array(session.token.utf8)
        #expect(sessions.check(cookie: session.id, token: token, now: 100 + AdminSessions.lifetime - 1) == .accepted)
        #expect(sessions.check(cookie: session.id, token: token, now: 100 + AdminSessions.lifetime) == .expired)
        // Loading the page then opens a new session (a new cookie and token); the old one is forgotten.
        let renewed = sessions.open(cookie: session.id, now: 100 + AdminSessions.lifetime, random: &random)
        #expect(renewed.isNew && renewed.session.id != session.id && sessions.count == 1)
        #expect(sessions.check(cookie: session.id, token: token, now: 100 + AdminSessions.lifetime) == .unknownSession)
    }

    @Test func theOldestIsEvictedBeyondTheCapacity() {
        var sessions = AdminSessions()
        var random = SplitMix64(seed: 9)
        let first = sessions.open(cookie: nil, now: 0, random: &random).session
        var last = first
        for index in 1...AdminSessions.capacity {
            last = sessions.open(cookie: nil, now: Double(index), random: &random).session
        }
        #expect(sessions.count == AdminSessions.capacity)
        #expect(sessions.check(cookie: first.id, token: Array(first.token.utf8), now: 100) == .unknownSession)
        #expect(sessions.check(cookie: last.id, token: Array(last.token.utf8), now: 100) == .accepted)
    }

    @Test func flashesAndCookies() {
        var sessions = AdminSessions()
        var random = SplitMix64(seed: 1)
        let session = sessions.open(cookie: nil, now: 0, random: &random).session
        sessions.setFlash("Client 7 removed", cookie: session.id)
        #expect(sessions.takeFlash(cookie: session.id) == "Client 7 removed")
        #expect(sessions.takeFlash(cookie: session.id) == nil)
        #expect(
            AdminSessions.setCookie(session)
                == "rr_admin=\(session.id); Path=/admin/; HttpOnly; SameSite=Strict; Max-Age=43200")
        let id = "0123456789ABCDEF0123456789abcdef"
        #expect(AdminSessions.cookieID(["theme=dark; rr_admin=\(id); x=y"]) == id.lowercased())
        #expect(AdminSessions.cookieID(["a=b", "rr_admin=\(id)"]) == id.lowercased())
        #expect(AdminSessions.cookieID(["rr_admin=\(id)x"]) == nil)
        #expect(AdminSessions.cookieID(["rr_admin=<script>"]) == nil && AdminSessions.cookieID([]) == nil)
        #expect(AdminSessions.cookieID(["xrr_admin=\(id)"]) == nil)
    }
}

/// Who may post a form to the page: another site never, then the admin's credentials.
@Suite struct AdminPageGateTests {
    static func request(_ method: String, _ fields: String) -> HTTPRequestHead.Request {
        let head = "\(method) /admin/ HTTP/1.1\r\nHost: relay.example:8000\r\n\(fields)\r\n"
        guard case .request(let request) = HTTPRequestHead.parse(Array(head.utf8), limit: 8192) else {
            preconditionFailure("not a request")
        }
        return request
    }

    @Test func crossSiteFormsAreRefusedEvenWithCredentials() {
        let gate = AdminGate(admin: AdminCredentials(password: AdminPassword("hackme-please")!))
        let host = HostKey(SocketAddress(host: "192.0.2.7", port: 1)!)
        let auth = "Authorization: Basic " + Data("admin:hackme-please".utf8).base64EncodedString() + "\r\n"
        func decide(_ method: String, _ fields: String) -> AdminGate.Decision {
            gate.decidePage(
                Self.request(method, fields), changesState: method == "POST", lockout: SourceLockout(), host: host,
                now: 0)
        }
        #expect(decide("POST", auth) == .admin)
        #expect(decide("POST", auth + "Sec-Fetch-Site: same-origin\r\nOrigin: http://relay.example:8000\r\n") == .admin)
        #expect(decide("POST", auth + "Sec-Fetch-Site: cross-site\r\n") == .crossSite)
        #expect(decide("POST", auth + "Origin: http://evil.example\r\n") == .crossSite)
        #expect(decide("POST", "Sec-Fetch-Site: cross-site\r\n") == .crossSite)
        #expect(decide("POST", "") == .missing)
        #expect(decide("GET", "") == .missing)
        // Reading the page from another site's link is not a change (the browser keeps the answer from that site).
        #expect(decide("GET", auth + "Sec-Fetch-Site: cross-site\r\n") == .admin)
        // A source's credentials are wrong ones here.
        let source = "Authorization: Basic " + Data("source:hackme-please".utf8).base64EncodedString() + "\r\n"
        #expect(decide("POST", source) == .wrong(key: AdminGate.adminKey(host)))
        var lockout = SourceLockout()
        for second in 0..<SourceLockout.limit { lockout.failed(AdminGate.adminKey(host), now: Double(second)) }
        let locked = gate.decidePage(
            Self.request("POST", auth), changesState: true, lockout: lockout, host: host, now: 20)
        guard case .lockedOut = locked else {
            Issue.record("not locked out: \(locked)")
            return
        }
    }
}
