import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: the binary and hand-written sources.
extension ServerProcessTests {
    /// `killsource` with `ban=` (our addition, as AzuraCast bars a kicked streamer): the source is ended and its
    /// station's credentials are refused 403 with `Retry-After` until the bar ends; a source cannot set a bar; a bar
    /// out of range is refused.
    @Suite(.timeLimit(.minutes(2)))
    struct SourceBanTests {
        @Test func aKickedDJStaysOffTheAirForTheBar() throws {
            let http = try freePort()
            let config = temporaryPath("ban.conf")
            defer { try? FileManager.default.removeItem(atPath: config) }
            let password = "dj-pass-123"
            try """
            [server]
            status = off
            http = 127.0.0.1:\(http)
            admin_password = admin-pass-1
            [station main]
            upstream = \(Fixture.path("stereo-44k-128k.mp3"))
            bind = 127.0.0.1
            port = \(try freePort())
            source_password = \(password)
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let server = try ServerProcess(arguments: ["serve", "--config", config])
            defer { server.stop() }
            let audio = try LiveSourceProtocolTests.mp3(660, seconds: 20)
            let admin = "Authorization: Basic \(Data("admin:admin-pass-1".utf8).base64EncodedString())\r\n"
            func call(_ path: String, _ auth: String = admin) throws -> HTTPAnswer {
                try httpFetch(http, "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\(auth)\r\n")
            }
            let dj = try LiveSourceProtocolTests.RawSource(port: http, path: "/main.opus", password: password)
            #expect(dj.status == 100, "\(dj.answer)")
            dj.send(audio)
            try #require(waitUntil(5) { server.log.contains("input live plays now") }, "\(server.log)")

            // The source may end itself, not bar itself.
            let sourceAuth = "Authorization: Basic \(Data("source:\(password)".utf8).base64EncodedString())\r\n"
            #expect(try call("/admin/killsource?mount=/main.opus&ban=600", sourceAuth).status == 401)
            #expect(try call("/admin/killsource?mount=/main.opus&ban=-1").status == 400)
            #expect(try call("/admin/killsource?mount=/main.opus&ban=604801").status == 400)
            let kill = try call("/admin/killsource?mount=/main.opus&ban=3")
            #expect(kill.status == 200 && kill.text.contains("Source Removed"), "\(kill.text)")
            let barredAt = Date()
            #expect(dj.closedByServer(within: 3))
            #expect(server.logged("station main refuses live sources for 3 s (killsource ban)"))

            // Reconnecting at once (as Liquidsoap does): refused while barred, with how long; wrong credentials
            // still learn nothing of the bar.
            let again = try LiveSourceProtocolTests.RawSource(port: http, path: "/main.opus", password: password)
            #expect(again.status == 403 && again.answer.contains("Retry-After: "), "\(again.answer)")
            let stranger = try LiveSourceProtocolTests.RawSource(port: http, path: "/main.opus", password: "nope-nope")
            #expect(stranger.status == 401, "\(stranger.answer)")
            // After the bar, the DJ is taken again (asked again every 0.4 s or so: refused until the bar ends).
            var back: LiveSourceProtocolTests.RawSource?
            #expect(
                waitUntil(6) {
                    back = try? LiveSourceProtocolTests.RawSource(port: http, path: "/main.opus", password: password)
                    return back?.status == 100
                })
            #expect(Date().timeIntervalSince(barredAt) > 2.9, "taken before the bar ended")
            let taken = try #require(back)
            taken.send(audio)
            #expect(
                waitUntil(5) { server.log.components(separatedBy: "input live plays now").count == 3 }, "\(server.log)")
        }
    }
}
