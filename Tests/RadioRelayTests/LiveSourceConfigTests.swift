import Foundation
import RadioRelayNet
import Testing

@testable import RadioRelay

/// `source_password` and `source_timeout` in a config file: the live input at the top, the paths a source may use,
/// and the mistakes refused with their line — never quoting the password.
@Suite struct LiveSourceConfigTests {
    static func messages(_ text: String, credentials: String? = nil) -> [String] {
        ConfigFileErrorTests.messages(text, credentials: credentials)
    }

    @Test func aStationWithASourcePasswordHasALiveInputOnTop() throws {
        let configuration = try ConfigFileTests.parse(
            "[server]\nhttp = 127.0.0.1:8100\n\n[station main]\nupstream = /a.mp3\nsource_password = hackme-live-1\n"
                + "source_timeout = 4\nmp3 = yes\n\n[station studio]\nport = 8002\nsource_password = studio-pw-2\n")
        let main = try #require(configuration.stations.first)
        #expect(main.inputs.map(\.name) == ["live", "1"] && main.inputs[0].isLive && main.inputs[0].kind == .live)
        #expect(main.inputs[0].stallTimeout == 4 && main.inputs[0].isPaced && !main.inputs[0].isFile)
        #expect(main.sourcePaths == ["/main", "/main.opus", "/main.mp3"])
        #expect("\(main.sourcePassword.map { "\($0)" } ?? "")" == "***")
        // A live-only station: the live input alone.
        let studio = configuration.stations[1]
        #expect(studio.inputs.map(\.name) == ["live"] && studio.sourceTimeout == 10)
    }

    @Test(
        arguments: [
            (
                "[station main]\nupstream = /a.mp3\nsource_password = hackme-live-1\n",
                "r.conf:1: station main: source_password takes live sources on the HTTP address: set http in [server] "
                    + "(or --http)"
            ),
            (
                "[server]\nhttp = 8100\n[station main]\nupstream = /a.mp3\nsource_password = short\n",
                "r.conf:5: source_password = ***: use \(SourcePassword.accepts)"
            ),
            (
                "[server]\nhttp = 8100\n[station main]\nupstream = /a.mp3\nsource_password = has space 123\n",
                "r.conf:5: source_password = ***: use \(SourcePassword.accepts)"
            ),
            (
                "[server]\nhttp = 8100\n[station main]\nupstream = tcp://root:8000\nsource_password = hackme-live-1\n",
                "r.conf:3: station main: source_password takes MP3 or Ogg Opus sources that the station decodes and "
                    + "encodes; an edge relays its roots' Ogg Opus without decoding: give the live source to the root "
                    + "station"
            ),
            (
                "[server]\nhttp = 8100\n[station main]\nupstream = /a.mp3\nsource_password = hackme-live-1\n"
                    + "source_timeout = 0\n",
                "r.conf:6: source_timeout = 0: use 1 to 300 seconds"
            ),
            (
                "[server]\nhttp = 8100\n[station main]\nupstream = /a.mp3\nsource_password = hackme-live-1\n"
                    + "[station other]\nport = 8010\nupstream = /b.mp3\nmount = main\n",
                "r.conf:3: station main: a live source for /main would be taken by station other's mount of that path: "
                    + "rename one"
            ),
            (
                "[station main]\nupstream = /a.mp3\nmount = admin.opus\n",
                "r.conf:3: station main: mount /admin.opus: /admin/ is the source clients' (Icecast's admin calls)"
            ),
            (
                "[server]\nhttp = 8100\n[station main]\nupstream = /a.mp3\nsource_password = hackme-live-1\n"
                    + "[input main/live]\nupstream = /b.mp3\n",
                "r.conf:3: station main: input live: the name is the live source's: rename it"
            ),
        ])
    func mistakesAreRefusedWithoutThePassword(_ text: String, _ message: String) {
        let messages = Self.messages(text)
        #expect(messages.contains(message), "\(messages)")
        #expect(!messages.joined().contains("hackme-live-1") && !messages.joined().contains("has space"))
    }

    @Test func thePasswordMayComeFromACredential() throws {
        let directory = NSTemporaryDirectory() + "radio-relay-test-credentials-\(getpid())-live"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "studio-secret-9\n".write(toFile: directory + "/live", atomically: true, encoding: .utf8)
        let configuration = try ConfigFileTests.parse(
            "[server]\nhttp = 8100\n[station main]\nupstream = /a.mp3\nsource_password = @credential:live\n",
            credentials: directory)
        #expect(configuration.stations.first?.sourcePassword == SourcePassword("studio-secret-9"))
    }
}
