import Foundation
import FoundationXML
import Glibc
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: icecast2 beside the relay.
extension PeerTests {
    /// Icecast 2.4's admin calls answered by icecast2 and by the relay serving the same two mounts — `/a.opus` (an
    /// ffmpeg Ogg Opus source) and `/b.mp3` (an ffmpeg MP3 source) — with the same three listeners on each mount
    /// (ffmpeg, mpv, curl): `stats`, `listmounts` and `listclients` compared element by element (the element trees,
    /// with values normalised where they differ by nature: times, byte counts, IDs), `killclient`, and the same calls
    /// with wrong or missing credentials, an unknown mount, an unknown ID, an unknown command.
    @Suite(
        .timeLimit(.minutes(2)),
        .enabled(
            if: tool("icecast2") != nil && tool("ffmpeg") != nil && tool("mpv") != nil && tool("curl") != nil,
            "needs icecast2, ffmpeg, mpv and curl (.ci/deps --test)"))
    struct IcecastAdminTests {
        /// The three listeners of `url`, each bounded to 60 s.
        static func listeners(_ url: String) throws -> [SourceClient] {
            [
                try SourceClient("curl", ["-s", "-o", "/dev/null", "--max-time", "60", url]),
                try SourceClient(
                    "ffmpeg", ["-hide_banner", "-loglevel", "error", "-t", "60", "-i", url, "-f", "null", "-"]),
                try SourceClient(
                    "mpv", ["--no-config", "--no-video", "--ao=null", "--length=60", "--really-quiet", url]),
            ]
        }

        static func call(_ port: UInt16, _ path: String, auth: String?) throws -> HTTPAnswer {
            let header = auth.map { "Authorization: Basic \(Data($0.utf8).base64EncodedString())\r\n" } ?? ""
            return try httpFetch(port, "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\n\(header)\r\n")
        }

        static func document(_ answer: HTTPAnswer) throws -> XMLDocument {
            try XMLDocument(data: Data(answer.body))
        }

        /// The names of the elements `xpath` selects, in order.
        static func names(_ document: XMLDocument, _ xpath: String) throws -> [String] {
            try document.nodes(forXPath: xpath).compactMap(\.name)
        }

        static func text(_ document: XMLDocument, _ xpath: String) throws -> [String] {
            try document.nodes(forXPath: xpath).compactMap(\.stringValue)
        }

        static func field(_ head: String, _ name: String) -> String? {
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }

        @Test func theAdminAnswersAreIcecasts() throws {
            let icecast = try ServerProcessTests.IcecastPushTests.IcecastServer(port: try freePort())
            defer { icecast.remove() }
            let password = icecast.password
            let http = try freePort()
            let config = temporaryPath("admin.conf")
            defer { try? FileManager.default.removeItem(atPath: config) }
            try """
            [server]
            status = off
            http = 127.0.0.1:\(http)
            admin_password = \(password)
            [station a]
            upstream = \(Fixture.path("stereo-44k-128k.mp3"))
            bind = 127.0.0.1
            port = \(try freePort())
            source_password = \(password)
            [station b]
            upstream = \(Fixture.path("stereo-44k-128k.mp3"))
            bind = 127.0.0.1
            port = \(try freePort())
            mp3 = yes
            source_password = \(password)
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let relay = try ServerProcessTests.ServerProcess(arguments: ["serve", "--config", config])
            defer { relay.stop() }
            let servers = [("icecast2", icecast.port), ("relay", http)]
            var peers: [SourceClient] = []
            defer { for peer in peers { peer.stop() } }
            for (_, port) in servers {
                for (mount, opus, name) in [("/a.opus", true, "Station A"), ("/b.mp3", false, "Station B")] {
                    peers.append(
                        try SourceClient.ffmpeg(
                            port: port, password: password, mount: mount, frequency: 440, seconds: 90, opus: opus,
                            name: name))
                }
            }
            let admin = "admin:\(password)"
            // Both sources on the air on both servers (the relay names a live source's address and agent).
            for (label, port) in servers {
                let live = waitUntil(15) {
                    guard let stats = try? Self.document(try Self.call(port, "/admin/stats", auth: admin)) else {
                        return false
                    }
                    let path = "/icestats/source[@mount='/a.opus' or @mount='/b.mp3']/user_agent"
                    return (try? Self.text(stats, path).count) == 2
                }
                try #require(live, "\(label): the sources are not on the air\n\(relay.log)")
            }
            for (_, port) in servers {
                for mount in ["/a.opus", "/b.mp3"] { peers += try Self.listeners("http://127.0.0.1:\(port)\(mount)") }
            }
            for (label, port) in servers {
                let all = waitUntil(20) {
                    ["/a.opus", "/b.mp3"].allSatisfy { mount in
                        let answer = try? Self.call(port, "/admin/listclients?mount=\(mount)", auth: admin)
                        return answer.flatMap { try? Self.text(Self.document($0), "//listener/ID").count } == 3
                    }
                }
                try #require(all, "\(label): not three listeners on each mount")
                // Icecast's `stats` follows its listener lists a little later.
                let counted = waitUntil(20) {
                    let stats = try? Self.document(try Self.call(port, "/admin/stats", auth: admin))
                    return stats.flatMap { try? Self.text($0, "/icestats/listeners") } == ["6"]
                }
                try #require(counted, "\(label): stats does not count six listeners")
            }
            try compareDocuments(icecast: icecast.port, relay: http, admin: admin)
            try compareRefusals(icecast: icecast.port, relay: http, admin: admin, password: password)
            try compareKills(icecast: icecast.port, relay: http, admin: admin)
        }

        /// `stats`, `listmounts` and `listclients`, element by element.
        func compareDocuments(icecast: UInt16, relay: UInt16, admin: String) throws {
            let stats = try [icecast, relay].map { try Self.document(try Self.call($0, "/admin/stats", auth: admin)) }
            // The server's own fields: the same names in the same order.
            let global = "/icestats/*[not(self::source)]"
            #expect(try Self.names(stats[0], global) == Self.names(stats[1], global))
            #expect(try Self.text(stats[1], "/icestats/listeners") == ["6"])
            #expect(try Self.text(stats[0], "/icestats/listeners") == ["6"])
            for mount in ["/a.opus", "/b.mp3"] {
                let path = "/icestats/source[@mount='\(mount)']/*"
                let (theirs, ours) = (try Self.names(stats[0], path), try Self.names(stats[1], path))
                // Every field Icecast gives, by name; what the relay adds is what Icecast gives a source that sends
                // it (`audio_info`, `bitrate`) or once it has read the stream's codec (`subtype`), never a renamed
                // one; in Icecast's order (by name).
                #expect(Set(theirs).isSubset(of: ours), "\(mount): missing \(Set(theirs).subtracting(ours))")
                let extras = Set(ours).subtracting(theirs)
                #expect(extras.isSubset(of: ["audio_info", "bitrate", "title", "subtype"]), "\(mount): \(extras)")
                #expect(ours == ours.sorted(), "\(mount): \(ours)")
                for name in ["listeners", "listener_peak", "server_type", "server_name", "subtype", "public"]
                where theirs.contains(name) {
                    let values = try stats.map { try Self.text($0, "/icestats/source[@mount='\(mount)']/\(name)") }
                    #expect(values[0] == values[1], "\(mount) \(name): \(values)")
                }
                let urls = try stats.map { try Self.text($0, "/icestats/source[@mount='\(mount)']/listenurl") }
                #expect(urls.allSatisfy { $0.count == 1 && $0[0].hasSuffix(mount) }, "\(urls)")
            }
            let mounts = try [icecast, relay].map {
                try Self.document(try Self.call($0, "/admin/listmounts", auth: admin))
            }
            for mount in ["/a.opus", "/b.mp3"] {
                let path = "/icestats/source[@mount='\(mount)']/*"
                #expect(try Self.names(mounts[0], path) == Self.names(mounts[1], path), "\(mount)")
                for name in ["listeners", "content-type", "fallback"] {
                    let values = try mounts.map { try Self.text($0, "/icestats/source[@mount='\(mount)']/\(name)") }
                    #expect(values[0] == values[1], "\(mount) \(name): \(values)")
                }
            }
            for mount in ["/a.opus", "/b.mp3"] {
                let clients = try [icecast, relay].map {
                    try Self.document(try Self.call($0, "/admin/listclients?mount=\(mount)", auth: admin))
                }
                #expect(try Self.names(clients[0], "/icestats/*") == ["source"])
                #expect(try Self.names(clients[1], "/icestats/*") == ["source"])
                let children = try clients.map { try Self.names($0, "/icestats/source/*") }
                #expect(children[0] == ["Listeners", "listener", "listener", "listener"])
                #expect(children[0] == children[1], "\(mount)")
                let theirs = try Self.names(clients[0], "/icestats/source/listener[1]/*")
                #expect(theirs == ["IP", "UserAgent", "Connected", "ID"])
                for index in 1...3 {
                    #expect(
                        try Self.names(clients[1], "/icestats/source/listener[\(index)]/*") == theirs + ["Protocol"])
                }
                let agents = try clients.map { try Self.text($0, "//listener/UserAgent").sorted() }
                #expect(agents[0] == agents[1] && agents[0].count == 3, "\(mount): \(agents)")
                #expect(
                    try clients.map { try Self.text($0, "//listener/IP") }
                        == Array(repeating: Array(repeating: "127.0.0.1", count: 3), count: 2))
                #expect(try Self.text(clients[1], "/icestats/source/Listeners") == ["3"])
            }
        }

        /// The same refusals, byte for byte where Icecast's text is the answer.
        func compareRefusals(icecast: UInt16, relay: UInt16, admin: String, password: String) throws {
            for auth in [nil, "admin:wrong-password", "nobody:\(password)"] {
                let answers = try [icecast, relay].map { try Self.call($0, "/admin/stats", auth: auth) }
                #expect(answers.map(\.status) == [401, 401], "\(auth ?? "none")")
                #expect(
                    answers.map { Self.field($0.head, "WWW-Authenticate") }
                        == Array(
                            repeating: "Basic realm=\"Icecast2 Server\"", count: 2))
                #expect(
                    answers.map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }
                        == Array(
                            repeating: "You need to authenticate", count: 2))
            }
            let cases: [(String, Int, String)] = [
                ("/admin/listclients?mount=/nope", 400, "400 - Source does not exist"),
                ("/admin/killclient?mount=/nope&id=1", 400, "400 - Source does not exist"),
                ("/admin/listclients", 400, "400 - Unknown admin request"),
                ("/admin/killclient?mount=/a.opus", 400, "400 - Missing parameter"),
                ("/admin/bogus", 400, "400 - Unrecognised command"),
            ]
            for (path, status, message) in cases {
                let answers = try [icecast, relay].map { try Self.call($0, path, auth: admin) }
                #expect(answers.map(\.status) == [status, status], "\(path)")
                #expect(answers.allSatisfy { $0.text.contains(message) }, "\(path): \(answers.map(\.text))")
            }
            let unknown = try [icecast, relay].map {
                try Self.call($0, "/admin/killclient?mount=/a.opus&id=999999", auth: admin)
            }
            #expect(unknown.map(\.status) == [200, 200])
            #expect(unknown[0].text == unknown[1].text, "\(unknown.map(\.text))")
            #expect(unknown[1].text.contains("<message>Client 999999 not found</message><return>0</return>"))
        }

        /// `killclient` of the curl listener of `/a.opus` on each: the same answer, two listeners left.
        func compareKills(icecast: UInt16, relay: UInt16, admin: String) throws {
            for port in [icecast, relay] {
                let clients = try Self.document(try Self.call(port, "/admin/listclients?mount=/a.opus", auth: admin))
                let curl = try #require(
                    try clients.nodes(forXPath: "//listener[starts-with(UserAgent, 'curl/')]/ID").first?.stringValue)
                let answer = try Self.call(port, "/admin/killclient?mount=/a.opus&id=\(curl)", auth: admin)
                #expect(answer.status == 200)
                #expect(
                    answer.text == "<?xml version=\"1.0\"?>\n<iceresponse><message>Client \(curl) removed</message>"
                        + "<return>1</return></iceresponse>\n")
                let gone = waitUntil(5) {
                    let left = try? Self.document(try Self.call(port, "/admin/listclients?mount=/a.opus", auth: admin))
                    return left.flatMap { try? Self.text($0, "//listener/ID") }.map {
                        $0.count == 2 && !$0.contains(curl)
                    }
                        ?? false
                }
                #expect(gone, "port \(port): listener \(curl) is still listed")
            }
        }
    }
}
