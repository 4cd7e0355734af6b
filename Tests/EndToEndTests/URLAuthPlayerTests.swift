import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: short runs of the players (a few seconds each), light beside the other lane.
extension ServerProcessTests {
    /// Icecast's `url` listener authentication with real players and a backend written as operators write one: the
    /// players are admitted with the right credentials (sent after the `401` challenge, as they send them) or a
    /// token in the stream URL, refused with wrong ones; and the calls the backend receives are Icecast 2.4's, field
    /// by field, beside those icecast2 sends for the same listener to the same backend.
    @Suite(
        .enabled(
            if: tool("ffmpeg") != nil && tool("mpv") != nil && tool("cvlc") != nil && tool("python3") != nil
                && tool("icecast2") != nil && tool("runuser") != nil,
            "needs ffmpeg, mpv, vlc-bin, python3 and icecast2 (.ci/deps --test)"))
    struct URLAuthPlayerTests {
        static func station(_ backend: AuthBackend) throws -> ServedStation {
            try ServedStation([
                "--mp3", "yes", "--port", "none", "--listener-add", backend.url("/auth"), "--listener-remove",
                backend.url("/remove"),
            ])
        }

        @Test func playersAreAdmittedWithTheirCredentialsAndRefusedWithWrongOnes() throws {
            let backend = try AuthBackend()
            defer { backend.stop() }
            let station = try Self.station(backend)
            defer { station.stop() }
            let base = "127.0.0.1:\(station.http)/test.opus"
            let ffmpeg = Background { try PeerTests.HLSPlayerTests.decode("http://alice:s3cret@\(base)", seconds: 4) }
            let token = Background { try PeerTests.HLSPlayerTests.decode("http://\(base)?token=good", seconds: 4) }
            let mpv = Background { try PeerTests.HLSPlayerTests.play("http://alice:s3cret@\(base)", seconds: 4) }
            let vlc = Background {
                try PlaylistPlayerTests.vlc("http://alice:s3cret@\(base)", seconds: 4)
            }
            let wrong = try PeerTests.HLSPlayerTests.decode("http://alice:wrong@\(base)", seconds: 4)
            let none = try PeerTests.HLSPlayerTests.decode("http://\(base)", seconds: 4)
            for (name, result) in [
                ("ffmpeg", try ffmpeg.value()), ("ffmpeg with a token", try token.value()), ("mpv", try mpv.value()),
                ("vlc", try vlc.value()),
            ] {
                // VLC transcoding to a file reads the burst and stops early, as in `PlaylistPlayerTests`.
                let least = name == "vlc" ? 2 : 3.5
                #expect(result.tones.seconds >= least, "\(name): \(result.tones.seconds) s: \(result.stderr)")
                #expect(
                    abs(result.tones.left440 - 0.475) < 0.05 && abs(result.tones.right1000 - 0.475) < 0.05,
                    "\(name): \(result.tones)")
            }
            #expect(wrong.status != 0 && wrong.stderr.contains("401"), "\(wrong.stderr)")
            #expect(none.status != 0 && none.stderr.contains("401"), "\(none.stderr)")
            #expect(wrong.tones.seconds == 0 && none.tones.seconds == 0)
            // Every admitted listener's remove came, once, with its ID; the refused ones have none.
            #expect(waitUntil(10) { backend.calls("listener_remove").count == 4 })
            let admitted = Set(
                backend.calls("listener_add").filter {
                    $0["user"] == "alice" && $0["pass"] == "s3cret" || ($0["mount"] ?? "").contains("token=good")
                }
                .compactMap { $0["client"] })
            let removed = backend.calls("listener_remove").compactMap { $0["client"] }
            #expect(admitted.count == 4 && Set(removed) == admitted && removed.count == 4, "\(admitted) \(removed)")
            for remove in backend.calls("listener_remove") {
                // Its seconds connected: at most the player's 4 s at real time, less the 2 s burst it took at once.
                let duration = Int(remove["duration"] ?? "") ?? -1
                #expect((0...5).contains(duration), "\(remove.fields)")
                #expect(remove["reason"] == "left")
            }
            // Each add the backend refused is a 401 (the players' first tries without credentials among them).
            let refusals = backend.calls("listener_add").count - admitted.count
            let metrics = try httpGet(station.status, "/metrics").text
            #expect(refusals >= 3)
            #expect(
                metrics.contains(#"radio_relay_listeners_refused_total{reason="auth_refused"} \#(refusals)"#),
                "\(metrics)")
        }

        /// The same listener (ffmpeg with `alice:s3cret` and a query) on the relay's MP3 mount and on Icecast's
        /// mount of the same name, both authenticating against the same backend: the same fields in the same order
        /// with the same values, but for `port` and `client`, and the relay's `reason` after Icecast's fields.
        @Test func theBackendReceivesWhatIcecastSends() throws {
            let backend = try AuthBackend()
            defer { backend.stop() }
            let icecastPort = try freePort()
            let icecast = try IcecastPushTests.IcecastServer(
                port: icecastPort,
                mounts: """
                    <mount type="normal"><mount-name>/test.mp3</mount-name>
                        <authentication type="url">
                            <option name="listener_add" value="\(backend.url("/auth"))"/>
                            <option name="listener_remove" value="\(backend.url("/remove"))"/>
                            <option name="auth_header" value="icecast-auth-user: 1"/>
                        </authentication>
                    </mount>
                    """)
            defer { icecast.remove() }
            let source = try ServerProcessTests.FailoverTests.Source(
                icecast, mount: "/test.mp3", filter: "sine=f=440:r=44100")
            defer { source.stop() }
            let station = try Self.station(backend)
            defer { station.stop() }
            let query = "?session=a%20b&lang=fr"
            for port in [icecastPort, station.http] {
                let result = try PeerTests.HLSPlayerTests.decode(
                    "http://alice:s3cret@127.0.0.1:\(port)/test.mp3\(query)", seconds: 2)
                #expect(result.tones.seconds >= 1.5, "\(port): \(result.stderr)")
            }
            #expect(waitUntil(10) { backend.calls("listener_remove").count == 2 })
            // Each server's calls, told apart by the port each names.
            func calls(_ action: String, _ port: UInt16) -> [AuthBackend.Call] {
                backend.calls(action).filter { $0["user"] == "alice" && $0["port"] == "\(port)" }
            }
            let adds = [calls("listener_add", icecastPort), calls("listener_add", station.http)]
            let removes = [calls("listener_remove", icecastPort), calls("listener_remove", station.http)]
            try #require(
                (adds + removes).allSatisfy { $0.count == 1 }, "\(backend.calls.map(\.fields))")
            for (icecastCall, ourCall) in [(adds[0][0], adds[1][0]), (removes[0][0], removes[1][0])] {
                let theirs = icecastCall.fields.filter { !["port", "client"].contains($0.0) }
                let ours = ourCall.fields.filter { !["port", "client", "reason"].contains($0.0) }
                #expect(theirs.map(\.0) == ours.map(\.0), "\(theirs) against \(ours)")
                for ((name, value), (_, mine)) in zip(theirs, ours) where name != "duration" {
                    #expect(value == mine, "\(name): Icecast \(value), relay \(mine)")
                }
                #expect(icecastCall.authorization == ourCall.authorization && ourCall.authorization != nil)
            }
            #expect(adds[1][0]["mount"] == "/test.mp3\(query)" && adds[1][0]["ip"] == "127.0.0.1")
            #expect(adds[1][0]["agent"]?.hasPrefix("Lavf/") == true)
            #expect(removes[1][0]["reason"] == "left" && removes[1][0].fields.last?.0 == "reason")
            print("auth fields, icecast2 then radio-relay:")
            for call in (adds + removes).flatMap({ $0 }) {
                print("  \(call.fields.map { "\($0.0)=\($0.1)" }.joined(separator: " "))")
            }
        }
    }
}
