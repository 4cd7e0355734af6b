import Foundation
import FoundationXML
import Glibc
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: the binary, raw sockets and ffmpeg decoders.
extension ServerProcessTests {
    /// `moveclients` between two stations playing different tones (a: 440 Hz, b: 880 Hz): 200 raw listeners, 20 HTTP
    /// Opus and 5 MP3 listeners of station a go on with station b's audio with no gap and no disconnection, each in
    /// its own stream (one serial, a page sequence without a hole, oggz-validate); they keep their IDs and the time
    /// they connected; the access log has a line per mount for each, and the listening report one session.
    @Suite(.timeLimit(.minutes(2)))
    struct MoveClientsTests {
        static let toneA = 440.0
        static let toneB = 880.0

        @Test(.enabled(if: tool("ffmpeg") != nil && tool("oggz-validate") != nil, "needs ffmpeg and oggz-tools"))
        func aStationsListenersMoveWithoutAGap() throws {
            let http = try freePort()
            let (portA, portB) = (try freePort(), try freePort())
            let accessLog = temporaryPath("move-access.log")
            let config = temporaryPath("move.conf")
            let files = [
                try taggedToneFile(Int(Self.toneA), seconds: 60, artist: "A", title: "a"),
                try taggedToneFile(Int(Self.toneB), seconds: 60, artist: "B", title: "b"),
            ]
            defer { for path in [accessLog, config] + files { try? FileManager.default.removeItem(atPath: path) } }
            // Two stations alike but for their tone and port.
            let stations = zip(["a", "b"], zip(files, [portA, portB])).map { name, served in
                "[station \(name)]\nupstream = \(served.0)\nbind = 127.0.0.1\nport = \(served.1)\nmp3 = yes\nhls = yes\nmax_per_ip = 0"
            }.joined(separator: "\n")
            try """
            [server]
            status = off
            http = 127.0.0.1:\(http)
            admin_password = move-them-1
            access_log = \(accessLog)
            \(stations)
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let server = try ServerProcess(arguments: ["serve", "--config", config])
            defer { server.stop() }
            let auth = "Authorization: Basic \(Data("admin:move-them-1".utf8).base64EncodedString())\r\n"
            func call(_ path: String) throws -> HTTPAnswer {
                try httpFetch(http, "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\(auth)\r\n")
            }
            func listed(_ mount: String) throws -> [String: Int] {
                let document = try XMLDocument(data: Data(try call("/admin/listclients?mount=\(mount)").body))
                var out: [String: Int] = [:]
                for node in try document.nodes(forXPath: "//listener") {
                    guard let element = node as? XMLElement,
                        let id = element.elements(forName: "ID").first?.stringValue,
                        let connected = element.elements(forName: "Connected").first?.stringValue.flatMap({ Int($0) })
                    else { continue }
                    out[id] = connected
                }
                return out
            }
            try #require(waitUntil(10) { (try? call("/admin/listmounts").status) == 200 }, "\(server.log)")
            // HLS players need the first segments (both stations: the move needs the destination's). The probes are
            // HLS sessions too (user agent `probe`), one on each station: a's moves with the others.
            try #require(
                waitUntil(20) {
                    ["/a/live.m3u8", "/b/live.m3u8"].allSatisfy {
                        (try? httpFetch(http, "GET \($0) HTTP/1.0\r\nUser-Agent: probe\r\n\r\n").status) == 200
                    }
                }, "\(server.log)")
            let players = try (1...2).map {
                try ServerProcessTests.FailoverTests.DecodingListener(
                    url: "http://127.0.0.1:\(http)/a/live.m3u8", agent: "hls-\($0)")
            }
            defer { for player in players { player.stop() } }
            // The decoding listeners: raw (captured whole), HTTP Opus and MP3 (ffmpeg).
            let raw = try Reader(port: portA)
            let opus = try ServerProcessTests.FailoverTests.DecodingListener(url: "http://127.0.0.1:\(http)/a.opus")
            let mp3 = try ServerProcessTests.FailoverTests.DecodingListener(url: "http://127.0.0.1:\(http)/a.mp3")
            defer {
                opus.stop()
                mp3.stop()
            }
            let crowd = try BulkListeners(port: portA, count: 199)
            let httpCrowd = try BulkListeners(
                port: http, count: 19, request: "GET /a.opus HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", firstAddress: 199)
            let mp3Crowd = try BulkListeners(
                port: http, count: 4, request: "GET /a.mp3 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", firstAddress: 218)
            defer { for group in [crowd, httpCrowd, mp3Crowd] { group.stop() } }
            try #require(
                waitUntil(10) { (try? listed("/a.opus").count) == 223 && (try? listed("/a.mp3").count) == 5 },
                "\(server.log)")
            let before = (opus: try listed("/a.opus"), mp3: try listed("/a.mp3"))
            try #require(waitUntil(15) { opus.seconds > 4 && mp3.seconds > 4 && players.allSatisfy { $0.seconds > 4 } })
            let movedAt = (opus: opus.seconds, mp3: mp3.seconds, hls: players.map(\.seconds).max() ?? 0)

            let answer = try call("/admin/moveclients?mount=/a.opus&destination=/b.opus")
            #expect(
                answer.status == 200 && answer.text.contains("Clients moved from /a.opus to /b.opus"), "\(answer.text)")
            let answerMP3 = try call("/admin/moveclients?mount=/a.mp3&destination=/b.mp3&format=json")
            #expect(answerMP3.text.contains("Clients moved from /a.mp3 to /b.mp3"), "\(answerMP3.text)")
            // Same IDs on the destination, none left behind, each connected since it first came.
            // b's probe has a's probe's address and agent: one player there (its session ends at the move).
            try #require(
                waitUntil(5) { (try? listed("/b.opus").count) == 223 },
                "b: \((try? listed("/b.opus").count) ?? -1), a: \((try? listed("/a.opus").count) ?? -1)")
            let after = (opus: try listed("/b.opus"), mp3: try listed("/b.mp3"))
            #expect(Set(after.opus.keys) == Set(before.opus.keys))
            #expect(Set(after.mp3.keys) == Set(before.mp3.keys))
            #expect(try listed("/a.opus").isEmpty && listed("/a.mp3").isEmpty)
            #expect(after.opus.allSatisfy { $0.value >= (before.opus[$0.key] ?? .max) })
            // Refusals: an unknown destination, the same mount, another format.
            #expect(
                try call("/admin/moveclients?mount=/b.opus&destination=/nowhere").text.contains("No such destination"))
            #expect(try call("/admin/moveclients?mount=/b.opus&destination=/b.opus").text.contains("identical"))
            #expect(try call("/admin/moveclients?mount=/b.opus&destination=/a.mp3").status == 400)

            // An HLS player plays the segments it was shown (it starts three behind), then the destination's.
            try #require(
                waitUntil(25) {
                    opus.seconds > movedAt.opus + 4 && mp3.seconds > movedAt.mp3 + 4
                        && players.allSatisfy { $0.seconds > movedAt.hls + 11 }
                })
            let (bytes, closed) = raw.finish()
            #expect(!closed, "the raw listener was disconnected")
            for group in [crowd, httpCrowd, mp3Crowd] { #expect(group.counts.closed == 0) }
            #expect(opus.process.isRunning && mp3.process.isRunning, "a decoding listener was disconnected")

            // The raw listener's capture: one valid stream, a then b, no hole.
            let capture = try LiveCapture(bytes)
            #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            let path = temporaryPath("moved.opus")
            try Data(try ChainedCapture.closed(bytes)).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let validation = try run(try #require(tool("oggz-validate")), [path])
            #expect(validation.status == 0, "oggz-validate: \(validation.stdout) \(validation.stderr)")
            let timelines =
                [
                    ("raw", ToneTimeline(capture.left, rate: 48_000, tones: [Self.toneA, Self.toneB])),
                    ("http", ToneTimeline(opus.samples, rate: 16_000, tones: [Self.toneA, Self.toneB])),
                    ("mp3", ToneTimeline(mp3.samples, rate: 16_000, tones: [Self.toneA, Self.toneB])),
                ] + players.map { ($0.agent, ToneTimeline($0.samples, rate: 16_000, tones: [Self.toneA, Self.toneB])) }
            #expect(players.allSatisfy { $0.process.isRunning }, "an HLS player stopped")
            for (name, timeline) in timelines {
                print("moved \(name) listener (decoded):\n\(timeline)")
                #expect(timeline.order() == [Self.toneA, Self.toneB], "\(name): \(timeline)")
                let gap = timeline.longestGap(from: 0.5)
                print("moved \(name) listener: longest silence \(String(format: "%.2f", gap)) s")
                #expect(gap <= 0.2, "\(name): \(timeline)")
            }

            // The access log: a line on each mount per listener; the report: one session each.
            for group in [crowd, httpCrowd, mp3Crowd] { group.stop() }
            opus.stop()
            mp3.stop()
            server.stop()
            let log = (try? String(contentsOfFile: accessLog, encoding: .utf8)) ?? ""
            let lines = log.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(lines.filter { $0.contains("\"TCP /a.opus\"") }.count == 200)
            #expect(lines.filter { $0.contains("\"TCP /b.opus\"") }.count == 200)
            #expect(lines.filter { $0.contains("\"GET /b.mp3 HTTP/1.1\"") }.count == 5)
            for agent in ["hls-1", "hls-2"] {
                let theirs = lines.filter { $0.hasSuffix("\"\(agent)\" \($0.split(separator: " ").last ?? "")") }
                #expect(
                    theirs.count == 2 && theirs.last?.contains("\"GET /b/live.m3u8 HTTP/1.1\"") == true, "\(theirs)")
            }
            let report = try run(
                try #require(radioRelayExecutable()), ["report", "--json", "--min-seconds", "0", accessLog])
            #expect(report.status == 0, "\(report.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
            let total = json?["total"] as? [String: Any]
            #expect(total?["sessions"] as? Int == 229, "\(report.stdout.prefix(2_000))")
        }
    }
}
