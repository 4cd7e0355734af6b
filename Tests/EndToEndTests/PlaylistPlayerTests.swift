import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane (mpv and a VLC for a few seconds each: light peers), which keeps the two lanes
/// about as long as each other.
extension ServerProcessTests {
    /// Each playlist fetched and played by a real player, the right tones decoded (the fixture: 440 Hz left, 1 kHz
    /// right): mpv opens `.m3u` and `.pls`, VLC (`cvlc`, run as `nobody`: it refuses root) opens `.xspf`; the URLs
    /// inside with and without `public_url`.
    @Suite(
        .timeLimit(.minutes(1)),
        .enabled(
            if: tool("mpv") != nil && tool("cvlc") != nil && tool("runuser") != nil,
            "needs mpv and vlc-bin (.ci/deps --test)"))
    struct PlaylistPlayerTests {
        /// VLC playing `url` for about `seconds` as `nobody`, its audio written as 48 kHz stereo float.
        static func vlc(_ url: String, seconds: Int) throws -> (
            status: Int32, stderr: String, tones: (left440: Double, right1000: Double, seconds: Double)
        ) {
            let directory = try PeerTests.HTTPPlayerTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            chmod(directory.path, 0o777)
            let output = directory.appendingPathComponent("vlc.f32").path
            let result = try run(
                try #require(tool("runuser")),
                [
                    "-u", "nobody", "--", try #require(tool("cvlc")), "-I", "dummy", "--no-video", "--play-and-exit",
                    "--run-time=\(seconds)",
                    "--sout=#transcode{acodec=f32l,channels=2,samplerate=48000}:std{access=file,mux=raw,dst=\(output)}",
                    url, "vlc://quit",
                ])
            let samples = PeerTests.HTTPPlayerTests.floats(
                (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data())
            return (result.status, result.stderr, PeerTests.HTTPPlayerTests.tones(interleaved: samples))
        }

        @Test func mpvAndVLCPlayThePlaylists() throws {
            let station = try ServedStation(["--mp3", "yes"])
            defer { station.stop() }
            let base = "http://127.0.0.1:\(station.http)"
            let m3u = try httpFetch(
                station.http, "GET /test.opus.m3u HTTP/1.1\r\nHost: 127.0.0.1:\(station.http)\r\n\r\n")
            print("GET /test.opus.m3u:\n\(m3u.text)")
            #expect(m3u.status == 200 && m3u.text.contains("\n\(base)/test.opus\n"), "\(m3u.head)\n\(m3u.text)")
            for path in ["/test.opus.m3u", "/test.mp3.pls"] {
                let played = try PeerTests.HLSPlayerTests.play(base + path, seconds: 3)
                print("mpv \(path): \(played.tones)")
                #expect(played.status == 0, "mpv \(path): \(played.stderr)")
                #expect(
                    played.tones.seconds >= 2.5 && played.tones.left440 > 0.1 && played.tones.right1000 > 0.1,
                    "\(path): \(played.tones)")
            }
            let vlc = try Self.vlc(base + "/test.opus.xspf", seconds: 6)
            print("cvlc /test.opus.xspf: \(vlc.tones)")
            #expect(vlc.tones.seconds >= 2 && vlc.tones.left440 > 0.1 && vlc.tones.right1000 > 0.1, "\(vlc.stderr)")
            // Each player came through its mount: mpv and VLC on the Opus one, mpv on the MP3 one.
            let outputs = try station.station().outputs
            #expect((outputs.first { $0.mount == "test.opus" }?.connections ?? 0) >= 2, "\(outputs)")
            #expect((outputs.first { $0.mount == "test.mp3" }?.connections ?? 0) >= 1, "\(outputs)")
        }

        /// With `public_url`, the URL inside is the public one whatever the request's Host.
        @Test func publicURLNamesTheMount() throws {
            let config = temporaryPath("public.conf")
            let (http, port) = (try freePort(), try freePort())
            try
                "[server]\nstatus = off\nhttp = 127.0.0.1:\(http)\npublic_url = https://radio.example.org\n[station main]\nbind = 127.0.0.1\nport = \(port)\nupstream = \(Fixture.path("stereo-44k-128k.mp3"))\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let server = try ServerProcess(arguments: ["serve", "--config", config])
            defer { server.stop() }
            let pls = try httpGet(http, "/main.opus.pls")
            print("GET /main.opus.pls with public_url:\n\(pls.text)")
            #expect(pls.text.contains("File1=https://radio.example.org/main.opus\n"), "\(pls.text)")
            let status = try httpGet(http, "/status-json.xsl")
            #expect(status.text.contains("\"listenurl\":\"https://radio.example.org/main.opus\""), "\(status.text)")
        }
    }
}
