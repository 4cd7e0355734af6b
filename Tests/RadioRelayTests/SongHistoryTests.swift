import Foundation
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Testing

@testable import RadioRelay

/// A station's last titles: at most 20, newest first, with UTC start and input; what is not a new title is not one;
/// served at `/NAME/history.json` before the HLS directory of the same name, and in `/status.json`.
@Suite struct SongHistoryTests {
    @Test func theLastTwentyTitlesNewestFirst() throws {
        var history = SongHistory()
        history.record("", at: 1, input: "1")
        #expect(history.entries.isEmpty, "an input without titles is not a song")
        for index in 0..<25 { history.record("Song \(index)", at: 1_796_400_000 + Double(index) * 180, input: "1") }
        history.record("Song 24", at: 1_796_405_000, input: "2")
        #expect(history.entries.count == SongHistory.limit)
        #expect(history.entries.first?.title == "Song 5" && history.entries.last?.title == "Song 24")
        #expect(history.entries.last?.input == "1", "the same song on a backup is not a new one")
        history.record("Live \"set\"\n", at: 1_796_406_000.25, input: "live")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(history.json.utf8)) as? [[String: String]])
        #expect(json.count == 20 && json.first?["title"] == "Live \"set\"\n" && json.first?["input"] == "live")
        #expect(json.first?["started"] == "2026-12-04T17:40:00.250Z")
        #expect(json.last?["title"] == "Song 6")
    }

    @Test func servedAtTheStationsHistoryPathBeforeItsHLSDirectory() throws {
        var history = SongHistory()
        history.record("First", at: 1_796_400_000, input: "1")
        history.record("Second", at: 1_796_400_180, input: "live")
        var directory = PublicDirectory(
            mounts: [
                PublicDirectory.Mount(
                    path: "/main.opus", eventsPath: "/main/events", station: "main",
                    hls: HLSStream(settings: HLSSegmenter.Settings()))
            ])
        directory.histories = ["main": history]
        func get(_ path: String, method: String = "GET") -> HTTPResponse? {
            let text = "\(method) \(path) HTTP/1.1\r\nHost: relay.example\r\n\r\n"
            guard
                case .respond(let response) = PublicRouter.route(
                    HTTPRequestHead.parse(Array(text.utf8), limit: 8192), directory: directory)
            else { return nil }
            return response
        }
        let answer = try #require(get("/main/history.json"))
        #expect(answer.status == 200)
        #expect(answer.headers.contains { $0 == ("Access-Control-Allow-Origin", "*") })
        #expect(answer.headers.contains { $0.0 == "Cache-Control" && $0.1.contains("max-age=5") })
        let json = try #require(try JSONSerialization.jsonObject(with: Data(answer.payload)) as? [String: Any])
        #expect(json["station"] as? String == "main")
        let entries = try #require(json["history"] as? [[String: String]])
        #expect(entries.map { $0["title"] } == ["Second", "First"] && entries.first?["input"] == "live")
        #expect(get("/main/history.json", method: "HEAD")?.payload.isEmpty == true)
        #expect(get("/other/history.json")?.status == 404)
        #expect(get("/main/live.m3u8")?.status != 404, "the HLS directory still answers")
    }
}
