import Foundation
import FoundationXML
import Glibc
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: the binary and raw sockets only.
extension ServerProcessTests {
    /// `killclient` of one raw listener among 100: that one is closed, the 99 others go on untouched; its access-log
    /// line names its ID and address; the listener list no longer has it.
    @Suite(.timeLimit(.minutes(2)))
    struct KillClientTests {
        @Test func oneListenerAmongAHundredIsKicked() throws {
            let http = try freePort()
            let port = try freePort()
            let accessLog = temporaryPath("kill-access.log")
            let config = temporaryPath("kill.conf")
            defer { for path in [accessLog, config] { try? FileManager.default.removeItem(atPath: path) } }
            try """
            [server]
            status = off
            http = 127.0.0.1:\(http)
            admin_password = kick-them-1
            access_log = \(accessLog)
            [station test]
            upstream = \(Fixture.path("stereo-44k-128k.mp3"))
            bind = 127.0.0.1
            port = \(port)
            max_per_ip = 0
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let server = try ServerProcess(arguments: ["serve", "--config", config])
            defer { server.stop() }
            let crowd = try BulkListeners(port: port, count: 100)
            defer { crowd.stop() }
            let auth = "Authorization: Basic \(Data("admin:kick-them-1".utf8).base64EncodedString())\r\n"
            func call(_ path: String) throws -> HTTPAnswer {
                try httpFetch(http, "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\(auth)\r\n")
            }
            func listed() throws -> [(id: String, address: String, agent: String)] {
                let document = try XMLDocument(data: Data(try call("/admin/listclients?mount=/test.opus").body))
                return try document.nodes(forXPath: "//listener").compactMap { node in
                    guard let element = node as? XMLElement,
                        let id = element.elements(forName: "ID").first?.stringValue,
                        let address = element.elements(forName: "IP").first?.stringValue,
                        let agent = element.elements(forName: "UserAgent").first?.stringValue
                    else { return nil }
                    return (id, address, agent)
                }
            }
            #expect(waitUntil(10) { (try? listed().count) == 100 }, "\(server.log)")
            let victim = try #require(try listed().first { $0.address == "127.0.2.50" })
            #expect(victim.agent == "Unknown", "a raw listener sends no user agent")
            let before = crowd.counts.bytes
            let answer = try call("/admin/killclient?mount=/test.opus&id=\(victim.id)")
            #expect(answer.status == 200)
            #expect(answer.text.contains("<message>Client \(victim.id) removed</message><return>1</return>"))
            #expect(waitUntil(5) { crowd.counts.closed == 1 }, "the kicked listener's connection is closed")
            let left = try listed()
            #expect(left.count == 99 && !left.contains { $0.id == victim.id })
            // The others keep reading: more bytes a second later, and no second close.
            #expect(waitUntil(5) { crowd.counts.bytes > before + 99 * 8_000 })
            #expect(crowd.counts.closed == 1)
            // Kicking it again finds no one, as Icecast says it.
            #expect(try call("/admin/killclient?mount=/test.opus&id=\(victim.id)").text.contains("not found"))
            let line = waitUntil(5) {
                ((try? String(contentsOfFile: accessLog, encoding: .utf8)) ?? "").contains("-\(victim.id) - [")
            }
            let log = (try? String(contentsOfFile: accessLog, encoding: .utf8)) ?? ""
            #expect(line, "no access-log line for listener \(victim.id): \(log)")
            let entry = log.split(separator: "\n").first { $0.contains("-\(victim.id) - [") }
            #expect(
                entry?.hasPrefix("127.0.2.50 ") == true && entry?.contains("\"TCP /test.opus\" 200") == true,
                "\(entry ?? "")")
            #expect(server.logged("listener #\(victim.id) (tcp 127.0.2.50) of /test.opus kicked"))
            // The listening report counts the kicked session once with the 99 that leave at the stop.
            crowd.stop()
            server.stop()
            let report = try run(
                try #require(radioRelayExecutable()), ["report", "--json", "--min-seconds", "0", accessLog])
            #expect(report.status == 0, "\(report.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
            let total = json?["total"] as? [String: Any]
            #expect(total?["sessions"] as? Int == 100 && total?["unique_listeners"] as? Int == 100, "\(report.stdout)")
        }
    }
}
