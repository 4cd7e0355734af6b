import Testing

@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Where the DJ on the air is named, from the values the front end answers with: the station page (escaped, titles
/// too), `/status-json.xsl`'s `dj` member in Icecast's name order, the history's `dj`, and the desk that knows who
/// is on the air.
@Suite struct DJShownTests {
    static func directory(dj: String?) -> PublicDirectory {
        var directory = PublicDirectory()
        var mount = PublicDirectory.Mount(path: "/main.opus", eventsPath: "/main/events", station: "main")
        mount.title = "<script>alert(1)</script>"
        mount.dj = dj
        directory.mounts = [mount]
        var history = SongHistory()
        history.record("Before & After", at: 1_796_400_000, input: "1")
        history.record("<b>Set</b>", at: 1_796_400_060, input: "live", dj: "alice")
        directory.histories["main"] = history
        return directory
    }

    @Test func theStationPageNamesTheDJ() {
        let page = IndexPage.html(Self.directory(dj: "alice"), now: 1_796_400_100)
        #expect(page.contains("<p class=\"now\">On the air: <strong>alice</strong></p>"))
        #expect(page.contains("<span>&lt;b&gt;Set&lt;/b&gt;</span><span class=\"dj\">alice</span></li>"), "\(page)")
        #expect(page.contains("<span>Before &amp; After</span></li>"), "no DJ on a relayed title")
        #expect(!page.contains("<script>alert") && !page.contains("<b>Set"))
        #expect(!IndexPage.html(Self.directory(dj: nil)).contains("On the air"))
        #expect(IndexPage.script.contains("entry.dj"), "the script renders the DJ of a refreshed history too")
    }

    @Test func icecastStatusAndHistoryNameTheDJ() {
        let mount = Self.directory(dj: "alice").mounts[0]
        let names = IcecastStatus.sourceFields(mount, base: "http://relay").map(\.name)
        #expect(names.contains("dj") && names == names.sorted(), "\(names)")
        var none = mount
        none.dj = nil
        #expect(!IcecastStatus.sourceFields(none, base: "http://relay").map(\.name).contains("dj"))
        let history = Self.directory(dj: nil).histories["main"]?.json ?? ""
        #expect(history.hasPrefix("[{\"title\":\"<b>Set</b>\",\"started\":"))
        #expect(history.contains("\"input\":\"live\",\"dj\":\"alice\"}") && !history.contains("\"input\":\"1\",\"dj\""))
    }

    @Test func theDeskKnowsWhoIsOnTheAir() throws {
        let desk = SourceDesk(station: "night", password: nil, accounts: true, paths: ["/night"], timeout: 5)
        #expect(desk.takesSources && desk.onAir == nil && desk.gateStation.password == nil)
        let source = LiveSource(
            socket: try connectedSocket(), peer: try #require(SocketAddress(host: "127.0.0.1", port: 4000)),
            request: LiveSource.Request(method: "PUT", path: "/night"), early: [], stallTimeout: 5, user: .dj("alice"))
        #expect(source.label == "live source 127.0.0.1:4000 (DJ alice)")
        #expect(desk.deliver(Handoff(value: source), info: StationInfo(), user: .dj("alice")))
        #expect(desk.onAir == .dj("alice"))
        desk.release()
        #expect(desk.onAir == nil)
        desk.update(password: nil, accounts: false, paths: ["/night"], timeout: 5)
        #expect(!desk.takesSources, "no password and no account: no live sources")
    }
}
