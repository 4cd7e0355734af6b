import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: real players.
extension PeerTests {
    /// HLS on a protected station: the first playlist is authenticated (a token in the URL, since Chromium does not
    /// send credentials written in one), every URI the player is sent carries its pass, ffmpeg and Chromium play it,
    /// a segment URL without a live pass is refused, and each player's session makes one `listener_add` and one
    /// `listener_remove` (the window after it stops fetching).
    @Suite(
        .enabled(
            if: tool("ffmpeg") != nil && tool("chromium") != nil && tool("python3") != nil,
            "needs ffmpeg, chromium and python3 (.ci/deps --test)"))
    struct HLSAuthTests {
        @Test(.timeLimit(.minutes(2))) func playersPlayAProtectedStationsHLSWithATokenOnce() throws {
            let backend = try AuthBackend()
            defer { backend.stop() }
            let station = try ServedStation([
                "--port", "none", "--listener-add", backend.url("/auth"), "--listener-remove", backend.url("/remove"),
                "--hls-segment", "1",
            ])
            defer { station.stop() }
            let base = "/test/live.m3u8"
            // Without a token or credentials: 401 with a challenge; nothing is served.
            let bare = try httpFetch(station.http, "GET \(base) HTTP/1.0\r\n\r\n")
            #expect(bare.status == 401 && bare.head.contains("WWW-Authenticate: Basic"), "\(bare.head)")
            // A probe with the token waits until the playlist lists three segments: each answer names them with
            // its pass.
            var answer: HTTPAnswer?
            let ready = waitUntil(20) {
                answer = try? httpFetch(station.http, "GET \(base)?token=good&who=probe HTTP/1.0\r\n\r\n")
                return answer?.status == 200 && (answer?.text.components(separatedBy: "#EXTINF:").count ?? 0) >= 4
            }
            let probe = try #require(answer)
            try #require(ready, "\(probe.head)\n\(probe.text)")
            let segments = probe.text.split(separator: "\n").filter { $0.hasSuffix(".m4s") || $0.contains(".m4s?") }
            #expect(!segments.isEmpty && segments.allSatisfy { $0.contains("?pass=") }, "\(probe.text)")
            #expect(probe.text.contains(".mp4?pass="), "the init segment's URI carries the pass: \(probe.text)")
            #expect(probe.head.contains("Cache-Control: private, no-cache") && !probe.head.contains("ETag"))
            let segment = String(try #require(segments.last))
            let name = String(segment.prefix { $0 != "?" })
            // The segment with the probe's pass; without it, with a forged pass: refused.
            let withPass = try httpFetch(station.http, "GET /test/\(segment) HTTP/1.0\r\n\r\n")
            #expect(withPass.status == 200 && withPass.head.contains("Cache-Control: private"), "\(withPass.head)")
            for uri in [name, name + "?pass=0123456789abcdef0123456789abcdef"] {
                let refused = try httpFetch(station.http, "GET /test/\(uri) HTTP/1.0\r\n\r\n")
                #expect(refused.status == 403, "\(uri): \(refused.head)")
            }
            let port = station.http
            let ffmpeg = Background {
                try HLSPlayerTests.decode("http://127.0.0.1:\(port)\(base)?token=good&who=ffmpeg", seconds: 8)
            }
            let chromium = try HTTPPlayerTests.playInChromium(
                "http://127.0.0.1:\(port)\(base)?token=good&who=chromium")
            let decoded = try ffmpeg.value()
            #expect(decoded.status == 0 && decoded.tones.seconds >= 7.9, "ffmpeg: \(decoded.stderr)")
            #expect(abs(decoded.tones.left440 - 0.475) < 0.05 && abs(decoded.tones.right1000 - 0.475) < 0.05)
            let advanced = try #require(chromium["advanced"] as? Double)
            #expect((chromium["errors"] as? [Any])?.isEmpty == true, "\(chromium)")
            #expect(advanced >= 9 && advanced <= 10.6, "currentTime advanced \(advanced) s in 10 s")
            // One add per player (its first playlist) and, the window after its last request, one remove.
            func calls(_ action: String, _ who: String) -> [AuthBackend.Call] {
                backend.calls(action).filter { ($0["mount"] ?? "").hasSuffix("who=\(who)") }
            }
            #expect(
                waitUntil(45) { ["ffmpeg", "chromium", "probe"].allSatisfy { !calls("listener_remove", $0).isEmpty } })
            for who in ["ffmpeg", "chromium"] {
                let adds = calls("listener_add", who)
                let removes = calls("listener_remove", who)
                #expect(adds.count == 1 && removes.count == 1, "\(who): \(adds.count) adds, \(removes.count) removes")
                #expect(removes.first?["client"] == adds.first?["client"] && removes.first?["reason"] == "left")
                let duration = Int(removes.first?["duration"] ?? "") ?? -1
                print("\(who): add client=\(adds.first?["client"] ?? "-"), remove duration=\(duration)")
                // To its last request: ffmpeg's 8 s less what it fetched at once, Chromium's 10 s and its buffering.
                #expect(duration >= 3 && duration <= 20, "\(who): \(duration) s")
            }
            let snapshot = try statusSnapshot(station.status)
            #expect(snapshot.authentication.removesSent == snapshot.authentication.admitted)
        }
    }
}
