import Foundation
import FoundationXML
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Icecast's admin API as values: the calls parsed, who may make them (`AdminGate`, on virtual time), and the
/// answers' documents (`IcecastAdmin`) with hostile text in every field that reaches them.
@Suite struct AdminAPITests {
    static func request(_ target: String, _ fields: String = "Host: relay.example:8000\r\n")
        -> HTTPRequestHead.Request
    {
        guard
            case .request(let request) = HTTPRequestHead.parse(
                Array("GET \(target) HTTP/1.1\r\n\(fields)\r\n".utf8), limit: 8192)
        else { preconditionFailure("not a request: \(target)") }
        return request
    }

    static func call(_ target: String) -> AdminCall? {
        let request = request(target)
        return AdminCall.parse(path: request.path, query: request.query)
    }

    static func basic(_ user: String, _ password: String) -> String {
        "Authorization: Basic " + Data("\(user):\(password)".utf8).base64EncodedString() + "\r\n"
    }

    static let host = HostKey(SocketAddress(host: "192.0.2.7", port: 1)!)
    static let admin = AdminCredentials(password: AdminPassword("hackme-please")!)
    static let source = SourceGate.Station(name: "jazz", password: SourcePassword("sourcepw1"))

    @Test func callsAreParsed() throws {
        let kill = try #require(Self.call("/admin/killclient?mount=jazz.opus&id=42&format=json"))
        #expect(kill.command == .killclient && kill.mount == "/jazz.opus" && kill.id == .value(ListenerID(42)))
        #expect(kill.format == .json && kill.command.changesState)
        #expect(Self.call("/admin/killclient?mount=/a&id=-1")?.id == .invalid)
        #expect(Self.call("/admin/killclient?mount=/a&id=99999999999999999999999")?.id == .invalid)
        #expect(Self.call("/admin/killclient?mount=/a")?.id == nil)
        #expect(Self.call("/admin/stats.xml")?.command == .stats)
        #expect(Self.call("/admin/stats")?.format == .xml)
        #expect(Self.call("/admin/killsource?mount=/a&ban=600")?.ban == .value(600))
        #expect(Self.call("/admin/killsource?mount=/a&ban=9223372036854775807")?.ban == .invalid)
        #expect(Self.call("/admin/moveclients?mount=/a&destination=b")?.destination == "/b")
        for unknown in ["/admin/bogus", "/admin/", "/admin/stats.xsl", "/admin/../stats", "/other"] {
            #expect(Self.call(unknown) == nil, "\(unknown)")
        }
        #expect(!AdminCall.Command.stats.changesState && AdminCall.Command.metadata.sourceMayCall)
        #expect(!AdminCall.Command.listclients.sourceMayCall)
    }

    @Test func theGateDecides() throws {
        let gate = AdminGate(admin: Self.admin)
        var lockout = SourceLockout()
        func decide(_ target: String, _ fields: String, lockout: SourceLockout) -> AdminGate.Decision {
            let request = Self.request(target, "Host: relay.example:8000\r\n" + fields)
            let call = AdminCall.parse(path: request.path, query: request.query)!
            let source = call.mount == "/jazz.opus" ? Self.source : nil
            return gate.decide(call, request, source: source, lockout: lockout, host: Self.host, now: 100)
        }
        let adminAuth = Self.basic("admin", "hackme-please")
        #expect(decide("/admin/stats", adminAuth, lockout: lockout) == .admin)
        #expect(decide("/admin/stats", "", lockout: lockout) == .missing)
        let adminKey = AdminGate.adminKey(Self.host)
        #expect(decide("/admin/stats", Self.basic("admin", "wrong"), lockout: lockout) == .wrong(key: adminKey))
        #expect(decide("/admin/stats", Self.basic("root", "hackme-please"), lockout: lockout) == .wrong(key: adminKey))
        // A source may set its own title and end itself, nothing else and nowhere else.
        let sourceAuth = Self.basic("source", "sourcepw1")
        #expect(
            decide("/admin/metadata?mount=/jazz.opus&mode=updinfo&song=x", sourceAuth, lockout: lockout)
                == .source(station: "jazz"))
        #expect(decide("/admin/killsource?mount=/jazz.opus", sourceAuth, lockout: lockout) == .source(station: "jazz"))
        #expect(decide("/admin/listclients?mount=/jazz.opus", sourceAuth, lockout: lockout) == .wrong(key: adminKey))
        #expect(decide("/admin/killsource?mount=/pop.opus", sourceAuth, lockout: lockout) == .wrong(key: adminKey))
        let sourceKey = SourceLockout.Key.source("jazz", Self.host)
        #expect(
            decide("/admin/killsource?mount=/jazz.opus", Self.basic("source", "nope"), lockout: lockout)
                == .wrong(key: sourceKey))
        // Ten wrong admin passwords lock the admin out from that address, the right one too; the source still works.
        for second in 0..<SourceLockout.limit { lockout.failed(adminKey, now: 50 + Double(second)) }
        #expect(decide("/admin/stats", adminAuth, lockout: lockout) == .lockedOut(seconds: 10))
        #expect(decide("/admin/killsource?mount=/jazz.opus", sourceAuth, lockout: lockout) == .source(station: "jazz"))
        // Without admin_password no credentials are the admin's.
        let none = AdminGate(admin: nil)
        let request = Self.request("/admin/stats", adminAuth)
        #expect(
            none.decide(
                Self.call("/admin/stats")!, request, source: nil, lockout: SourceLockout(), host: Self.host, now: 0)
                == .wrong(key: adminKey))
    }

    @Test func changesFromAnotherSiteAreRefused() {
        let gate = AdminGate(admin: Self.admin)
        let auth = Self.basic("admin", "hackme-please")
        func decide(_ target: String, _ fields: String) -> AdminGate.Decision {
            let request = Self.request(target, "Host: relay.example:8000\r\n" + auth + fields)
            return gate.decide(
                AdminCall.parse(path: request.path, query: request.query)!, request, source: nil,
                lockout: SourceLockout(), host: Self.host, now: 0)
        }
        let kill = "/admin/killclient?mount=/a.opus&id=1"
        #expect(decide(kill, "Sec-Fetch-Site: cross-site\r\n") == .crossSite)
        #expect(decide(kill, "Sec-Fetch-Site: same-site\r\n") == .crossSite)
        #expect(decide(kill, "Origin: https://evil.example\r\n") == .crossSite)
        #expect(decide(kill, "Origin: null\r\n") == .crossSite)
        #expect(decide(kill, "Origin: http://relay.example:8000.evil.example\r\n") == .crossSite)
        #expect(decide(kill, "Origin: http://relay.example:8000\r\nSec-Fetch-Site: same-origin\r\n") == .admin)
        #expect(decide(kill, "Sec-Fetch-Site: none\r\n") == .admin)
        #expect(decide(kill, "") == .admin, "a tool sends neither")
        // Reading is not refused: a browser keeps the answer from the other site's page.
        #expect(decide("/admin/stats", "Sec-Fetch-Site: cross-site\r\n") == .admin)
    }

    static func view() -> IcecastAdmin.View {
        var info = StationInfo()
        info.displayName = "Jazz <b>&</b>"
        info.genre = "Jazz\u{7}\u{1B}[2J"
        var jazz = PublicDirectory.Mount(
            path: "/jazz.opus", eventsPath: "/jazz/events", station: "jazz", info: info, title: "A \"title\" </x>",
            bitrate: 96_000)
        jazz.listeners = 2
        jazz.listenerPeak = 3
        jazz.admin.maxListeners = 100
        jazz.admin.sourceAddress = "198.51.100.4"
        jazz.admin.sourceAgent = "liquidsoap <&>"
        var alpha = PublicDirectory.Mount(path: "/alpha.mp3", eventsPath: "/alpha/events", station: "alpha")
        alpha.format = .mp3
        let place = ListenerMount(station: "jazz", mount: "/jazz.opus", kind: .tcp)
        let listeners = [
            ListenerEntry(
                id: ListenerID(7), place: place, address: "203.0.113.9", userAgent: nil, connectedAt: 40),
            ListenerEntry(
                id: ListenerID(9), place: place.of(.http), address: "2001:db8::1", userAgent: "<script>\u{0}",
                username: "ann", connectedAt: 90.9),
            ListenerEntry(
                id: ListenerID(11), place: place.of(.events), address: "203.0.113.10", userAgent: "x",
                connectedAt: 95),
        ]
        return IcecastAdmin.View(
            directory: PublicDirectory(mounts: [jazz, alpha], serverStart: 0), listeners: listeners,
            host: "relay.example:8000", now: 100, wallClock: 1_000)
    }

    @Test func listclientsIsIcecastsDocument() throws {
        let call = try #require(Self.call("/admin/listclients?mount=/jazz.opus"))
        let body = IcecastAdmin.listClients(Self.view(), call, format: .xml).textBody
        #expect(
            body == "<?xml version=\"1.0\"?>\n<icestats><source mount=\"/jazz.opus\"><Listeners>2</Listeners>"
                + "<listener><IP>203.0.113.9</IP><UserAgent>Unknown</UserAgent><Connected>60</Connected><ID>7</ID>"
                + "<Protocol>tcp</Protocol></listener><listener><IP>2001:db8::1</IP>"
                + "<UserAgent>&lt;script&gt;</UserAgent><Connected>9</Connected><ID>9</ID>"
                + "<username>ann</username><Protocol>http</Protocol></listener></source></icestats>\n")
        let parsed = try XMLDocument(data: Data(body.utf8))
        #expect(try parsed.nodes(forXPath: "/icestats/source/listener/ID").map(\.stringValue) == ["7", "9"])
        let json = IcecastAdmin.listClients(Self.view(), call, format: .json).textBody
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let source = try #require((object["icestats"] as? [String: Any])?["source"] as? [String: Any])
        #expect((source["listener"] as? [[String: Any]])?.map { $0["ID"] as? String } == ["7", "9"])
        let unknown = try #require(Self.call("/admin/listclients?mount=/nope"))
        #expect(IcecastAdmin.listClients(Self.view(), unknown, format: .xml).status == 400)
    }

    @Test func statsAndListmountsAreIcecastsDocuments() throws {
        let stats = IcecastAdmin.stats(Self.view(), request: Self.request("/admin/stats"), format: .xml).textBody
        let document = try XMLDocument(data: Data(stats.utf8))
        // Sources by mount, their fields by name, as Icecast lists them; hostile text escaped, controls replaced.
        #expect(
            try document.nodes(forXPath: "/icestats/source/@mount").map(\.stringValue) == ["/alpha.mp3", "/jazz.opus"])
        let names = try document.nodes(forXPath: "/icestats/source[@mount='/jazz.opus']/*").compactMap(\.name)
        #expect(names == names.sorted() && names.contains("total_bytes_sent") && names.contains("user_agent"))
        #expect(
            try document.nodes(forXPath: "//source[@mount='/jazz.opus']/server_name").first?.stringValue
                == "Jazz <b>&</b>")
        #expect(
            try document.nodes(forXPath: "//source[@mount='/jazz.opus']/genre").first?.stringValue
                == "Jazz[2J")
        #expect(try document.nodes(forXPath: "//source[@mount='/jazz.opus']/max_listeners").first?.stringValue == "100")
        #expect(
            try document.nodes(forXPath: "//source[@mount='/alpha.mp3']/max_listeners").first?.stringValue
                == "unlimited")
        let global = try document.nodes(forXPath: "/icestats/*[not(self::source)]").compactMap(\.name)
        #expect(global == global.sorted() && global.count == 18)
        // The same fields as JSON: `source` an array (even of one), each with its mount.
        let json = IcecastAdmin.stats(Self.view(), request: Self.request("/admin/stats"), format: .json).textBody
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let icestats = try #require(object["icestats"] as? [String: Any])
        let sources = try #require(icestats["source"] as? [[String: Any]])
        #expect(sources.map { $0["mount"] as? String } == ["/alpha.mp3", "/jazz.opus"])
        #expect(sources[1]["listeners"] as? Int == 2 && sources[1]["server_name"] as? String == "Jazz <b>&</b>")
        #expect(icestats["sources"] as? Int == 2 && icestats["admin"] as? String == "icemaster@localhost")
        let mounts = IcecastAdmin.listMounts(Self.view(), format: .xml).textBody
        #expect(mounts.contains("<source mount=\"/jazz.opus\"><fallback></fallback><listeners>2</listeners>"))
        var empty = Self.view()
        empty.directory.mounts = []
        #expect(IcecastAdmin.listMounts(empty, format: .xml).textBody == "<?xml version=\"1.0\"?>\n<icestats/>\n")
    }

    @Test func answersAreIcecasts() {
        #expect(
            IcecastAdmin.success("Client 7 removed", format: .xml).textBody
                == "<?xml version=\"1.0\"?>\n<iceresponse><message>Client 7 removed</message><return>1</return>"
                + "</iceresponse>\n")
        let missing = IcecastAdmin.notDone("Client 8 not found", format: .xml)
        #expect(missing.status == 200 && missing.textBody.contains("<return>0</return>"))
        let failure = IcecastAdmin.failure(400, "Source does not exist", format: .xml)
        #expect(
            failure.status == 400 && failure.headers.contains { $0 == ("Content-Type", "text/html; charset=utf-8") })
        #expect(failure.textBody.contains("<b>400 - Source does not exist</b>"))
        let unauthorized = IcecastAdmin.unauthorized()
        #expect(unauthorized.status == 401 && unauthorized.textBody == "You need to authenticate\n")
        #expect(unauthorized.headers.contains { $0 == ("WWW-Authenticate", "Basic realm=\"Icecast2 Server\"") })
        #expect(IcecastAdmin.failure(400, "x", format: .json).textBody.hasPrefix("{\"iceresponse\":"))
    }

    /// `killsource?ban=`: the station's sources are refused for the bar's seconds, on virtual time.
    @Test func aBarEnds() {
        let desk = SourceDesk(station: "jazz", password: SourcePassword("sourcepw1"), paths: ["/jazz"], timeout: 5)
        #expect(desk.barred(now: 0) == nil)
        desk.bar(for: 600, now: 100)
        #expect(desk.barred(now: 100) == 600 && desk.barred(now: 699.5) == 0.5)
        #expect(desk.barred(now: 700) == nil)
        desk.bar(for: 60, now: 200)
        desk.bar(for: 0, now: 201)
        #expect(desk.barred(now: 201) == nil)
    }

    @Test func secretsNeverPrint() {
        #expect("\(Self.admin)" == "admin:***" && "\(Self.admin.password)" == "***")
        #expect(AdminPassword("short") == nil && AdminPassword("with space1") == nil)
        #expect(AdminPassword("colons:are:fine") != nil)
        #expect(AdminCredentials.user("a:b") == nil && AdminCredentials.user("") == nil)
        #expect(AdminCredentials.user("operator") == "operator")
    }
}
