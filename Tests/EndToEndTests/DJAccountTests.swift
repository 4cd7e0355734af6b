import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: the binary, ffmpeg as a DJ's source client, and hand-written sources.
extension ServerProcessTests {
    /// DJ accounts (`[dj NAME]`): two DJs of one station and one of another. alice goes on the air with ffmpeg and is
    /// named in `/status.json`, on the station page, in `/status-json.xsl`, in the history and the log; the admin's
    /// `killsource` with `ban=60` ends her set and bars her account (403 with `Retry-After` when she reconnects), while
    /// bob goes on the air; carol, a DJ of the other station, is refused 403 here; a wrong password is 401.
    @Suite(.timeLimit(.minutes(1)))
    struct DJAccountTests {
        static func auth(_ user: String, _ password: String) -> String {
            "Authorization: Basic \(Data("\(user):\(password)".utf8).base64EncodedString())\r\n"
        }

        /// Half an hour of every day twelve hours from now (in any zone a whole hour off UTC): never now.
        static var farFromNow: String {
            let hour = Calendar(identifier: .gregorian).dateComponents(in: .gmt, from: Date()).hour ?? 0
            let start = (hour + 12) % 24
            return String(format: "%02d:00-%02d:30", start, start)
        }

        @Test func djsTakeOverAreNamedAndBarredByAccount() throws {
            let (http, status) = (try freePort(), try freePort())
            let config = temporaryPath("dj.conf")
            defer { try? FileManager.default.removeItem(atPath: config) }
            try """
            [server]
            status = 127.0.0.1:\(status)
            http = 127.0.0.1:\(http)
            admin_password = admin-pass-1
            [station main]
            upstream = \(Fixture.path("stereo-44k-128k.mp3"))
            bind = 127.0.0.1
            port = \(try freePort())
            [station other]
            upstream = \(Fixture.path("stereo-44k-128k.mp3"))
            bind = 127.0.0.1
            port = \(try freePort())
            [dj alice]
            password = alice-pass-1
            stations = main
            [dj bob]
            password = bob-pass-12
            stations = main
            [dj carol]
            password = carol-pass-1
            stations = other
            [dj dave]
            password = dave-pass-12
            stations = main
            hours = daily \(Self.farFromNow)
            timezone = Europe/Berlin
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let server = try ServerProcess(arguments: ["serve", "--config", config])
            defer { server.stop() }
            func get(_ port: UInt16, _ path: String, _ auth: String = "") throws -> HTTPAnswer {
                try httpFetch(port, "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\(auth)\r\n")
            }
            /// The DJ of main's live input in `/status.json` (nil: none, or no source).
            func statusDJ() -> String? {
                guard let answer = try? get(status, "/status.json"),
                    let json = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
                    let stations = json["stations"] as? [[String: Any]],
                    let inputs = stations.first(where: { $0["name"] as? String == "main" })?["inputs"]
                        as? [[String: Any]],
                    let source = inputs.first?["source"] as? [String: Any]
                else { return nil }
                return source["dj"] as? String
            }
            try #require(waitUntil(5) { (try? get(http, "/status-json.xsl"))?.status == 200 }, "\(server.log)")

            let alice = try SourceClient.ffmpeg(
                port: http, password: "alice-pass-1", mount: "/main", frequency: 660, seconds: 30, opus: false,
                user: "alice")
            defer { alice.stop() }
            try #require(waitUntil(8) { server.log.contains("input live plays now") }, "\(server.log)")
            #expect(server.logged("(DJ alice) connected (PUT /main"), "\(server.log)")
            #expect(waitUntil(3) { statusDJ() == "alice" })
            let page = try get(http, "/")
            #expect(page.text.contains("On the air: <strong>alice</strong>"), "\(page.text)")
            #expect(try get(http, "/status-json.xsl").text.contains("\"dj\":\"alice\""))
            // Her own title goes in the history with her name; bob cannot title her set.
            let metadata = "/admin/metadata?mount=/main&mode=updinfo&song=Alice+Live"
            #expect(try get(http, metadata, Self.auth("bob", "bob-pass-12")).status == 403)
            #expect(try get(http, metadata, Self.auth("alice", "alice-pass-1")).status == 200)
            #expect(
                waitUntil(3) {
                    (try? get(http, "/main/history.json"))?.text.contains(
                        "\"title\":\"Alice Live\",\"started\"") == true
                })
            #expect(try get(http, "/main/history.json").text.contains("\"input\":\"live\",\"dj\":\"alice\""))
            // A DJ cannot bar anyone; the admin's ban bars her account.
            #expect(
                try get(http, "/admin/killsource?mount=/main&ban=60", Self.auth("alice", "alice-pass-1")).status == 401)
            let kill = try get(http, "/admin/killsource?mount=/main&ban=60", Self.auth("admin", "admin-pass-1"))
            #expect(kill.status == 200 && kill.text.contains("Source Removed"), "\(kill.text)")
            #expect(server.logged("admin: DJ alice refused on every station for 60 s"), "\(server.log)")
            #expect(waitUntil(3) { statusDJ() == nil })

            // Reconnecting at once (as Liquidsoap does): refused 403 with how long; bob goes on the air meanwhile.
            let again = try LiveSourceProtocolTests.RawSource(
                port: http, path: "/main", password: "alice-pass-1", user: "alice")
            #expect(again.status == 403 && again.answer.contains("Retry-After: 6"), "\(again.answer)")
            #expect(again.answer.contains("DJ alice is barred"))
            let bob = try LiveSourceProtocolTests.RawSource(
                port: http, path: "/main", password: "bob-pass-12", user: "bob")
            #expect(bob.status == 100, "\(bob.answer)")
            bob.send(try LiveSourceProtocolTests.mp3(880, seconds: 10))
            #expect(
                waitUntil(8) { server.log.components(separatedBy: "input live plays now").count == 3 }, "\(server.log)")
            #expect(waitUntil(3) { statusDJ() == "bob" })
            #expect(try get(http, "/").text.contains("On the air: <strong>bob</strong>"))

            // carol may take over the other station only; a wrong password is 401 (and says nothing of bars).
            let carol = try LiveSourceProtocolTests.RawSource(
                port: http, path: "/main", password: "carol-pass-1", user: "carol")
            #expect(carol.status == 403 && carol.answer.contains("DJ carol may not take over this station"))
            let wrong = try LiveSourceProtocolTests.RawSource(
                port: http, path: "/main", password: "alice-pass-2", user: "alice")
            #expect(wrong.status == 401, "\(wrong.answer)")
            // The log line goes out through the log queue, after the answer: waited for, not raced.
            #expect(
                waitUntil(5) { server.log.contains("refused 403: DJ carol may not take over station main") },
                "\(server.log)")
            // dave's hours are not now.
            let dave = try LiveSourceProtocolTests.RawSource(
                port: http, path: "/main", password: "dave-pass-12", user: "dave")
            #expect(dave.status == 403 && dave.answer.contains("DJ dave is outside the account's hours (daily "))
            #expect(waitUntil(5) { server.log.contains("(Europe/Berlin))") }, "\(server.log)")
            #expect(!server.log.contains("alice-pass-1") && !server.log.contains("bob-pass-12"), "no password logged")

            // A reload that removes bob's account ends his set; alice's bar stays with her account.
            let text = try String(contentsOfFile: config, encoding: .utf8)
            try text.replacingOccurrences(of: "[dj bob]\npassword = bob-pass-12\nstations = main\n", with: "")
                .write(toFile: config, atomically: true, encoding: .utf8)
            server.signal(SIGHUP)
            #expect(
                waitUntil(5) { server.log.contains("reload: DJ accounts: removed bob (in place)") }, "\(server.log)")
            #expect(bob.closedByServer(within: 5), "bob's set ends")
            #expect(server.logged("reload: main: DJ bob may no longer take the station over"))
            let revoked = try LiveSourceProtocolTests.RawSource(
                port: http, path: "/main", password: "bob-pass-12", user: "bob")
            #expect(revoked.status == 401, "\(revoked.answer)")
            let still = try LiveSourceProtocolTests.RawSource(
                port: http, path: "/main", password: "alice-pass-1", user: "alice")
            #expect(still.status == 403 && still.answer.contains("DJ alice is barred"), "\(still.answer)")
        }
    }
}
