import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: one real peer at a time.
extension PeerTests {
    /// A DJ takes over a relayed station and hands back, with the real source clients a station meets: ffmpeg (MP3
    /// and Ogg Opus), ezstream (libshout's PUT) and Liquidsoap (`%mp3` and `%opus`, SOURCE). The relayed programme is
    /// a 440 Hz tone; each source sends its own. An ffmpeg listener decodes the Opus mount all along and another the
    /// MP3 pass-through mount, 1 000 raw listeners are read all along; the tones each heard, the seconds of silence
    /// at each switch, the titles `/status.json` showed and the listeners' disconnects say what happened.
    @Suite(
        .timeLimit(.minutes(3)),
        .enabled(
            if: tool("ffmpeg") != nil && tool("ezstream") != nil && tool("liquidsoap") != nil,
            "needs ffmpeg, ezstream and liquidsoap (.ci/deps --test)"))
    struct LiveSourceTests {
        static let password = "hackme-live-1"
        static let relayTone = 440.0

        /// The "live source … connected" lines in `log`.
        static func connections(_ log: String) -> Int {
            log.split(separator: "\n").count { $0.contains(": live source ") && $0.contains(" connected (") }
        }

        /// Seconds between each "live source … connected" line and the next "input live plays now" line.
        static func takeoverDelays(_ log: String) -> [Double] {
            func seconds(_ line: Substring) -> Double? {
                let parts = line.prefix(12).split(separator: ":")
                guard parts.count == 3, let h = Double(parts[0]), let m = Double(parts[1]), let s = Double(parts[2])
                else { return nil }
                return h * 3600 + m * 60 + s
            }
            var delays: [Double] = []
            var connected: Double?
            for line in log.split(separator: "\n") {
                if line.contains(": live source ") && line.contains(" connected (") { connected = seconds(line) }
                if line.contains(": input live plays now"), let from = connected, let at = seconds(line) {
                    delays.append(at - from)
                    connected = nil
                }
            }
            return delays
        }

        @Test func realClientsTakeOverAndHandBack() throws {
            let relay = try taggedToneFile(440, seconds: 60, artist: "Relay", title: "Programme")
            let ezFile = try taggedToneFile(550, seconds: 3, artist: "Ez", title: "Three")
            let lqMP3 = try taggedToneFile(770, seconds: 60, artist: "Lq", title: "Four")
            let lqOpus = try taggedToneFile(990, seconds: 60, artist: "Lq", title: "Five")
            defer { for file in [relay, ezFile, lqMP3, lqOpus] { try? FileManager.default.removeItem(atPath: file) } }
            let station = try ServedStation(
                upstream: relay,
                [
                    "--source-password", Self.password, "--source-timeout", "3", "--mp3", "yes", "--max-listeners",
                    "2000",
                ])
            defer { station.stop() }
            func playing() -> String? { (try? station.station())?.playingInput }
            func title() -> String? { (try? station.station())?.title }
            let opusListener = try ServerProcessTests.FailoverTests.DecodingListener(port: station.port)
            defer { opusListener.stop() }
            let mp3Listener = try ServerProcessTests.FailoverTests.DecodingListener(
                url: "http://127.0.0.1:\(station.http)/test.mp3")
            defer { mp3Listener.stop() }
            let crowd = try BulkListeners(port: station.port, count: 1000)
            defer { crowd.stop() }
            try #require(waitUntil(10) { playing() == "1" && opusListener.seconds > 2 }, "\(station.server.log)")

            var takeovers: [(client: String, seconds: Double)] = []
            /// Runs one client until it has played `seconds` live with `expectedTitle` shown, then ends it (or
            /// waits for its end) and waits for the hand-back.
            func phase(
                _ name: String, expectedTitle: String, _ start: () throws -> SourceClient,
                during: () throws -> Void = {}
            ) throws {
                let started = Date()
                let before = Self.connections(station.server.log)
                let client = try start()
                defer { client.stop() }
                // A client's own start-up is not the server's: Liquidsoap's took 3.3 s here alone, 8.8 s beside the
                // other lanes and a build, and over 15 s in one CI run. From its connection, the server's takeover.
                try #require(
                    waitUntil(60) { Self.connections(station.server.log) > before },
                    "\(name) did not connect in 60 s (running: \(client.isRunning)): \(station.server.log)")
                try #require(
                    waitUntil(10) { playing() == "live" }, "\(name) connected, did not take over: \(station.server.log)"
                )
                takeovers.append((name, Date().timeIntervalSince(started)))
                try during()
                #expect(waitUntil(10) { title() == expectedTitle }, "\(name): title \(String(describing: title()))")
                let live = try station.station().inputs.first
                #expect(live?.source != nil && live?.source?.userAgent != nil, "\(String(describing: live))")
                // Ends by itself (ffmpeg, ezstream) or is stopped after a few seconds live (Liquidsoap loops).
                if !client.waitForExit(3) { client.stop() }
                try #require(waitUntil(10) { playing() == "1" }, "\(name): no hand-back: \(station.server.log)")
                #expect(waitUntil(5) { opusListener.seconds > 0 } && opusListener.seconds > 0)
                // The relay plays a moment between two sources (with a crossfade on each side).
                _ = waitUntil(1.5) { false }
            }
            let port = station.http
            try phase(
                "ffmpeg MP3", expectedTitle: "Live One",
                {
                    try SourceClient.ffmpeg(
                        port: port, password: Self.password, mount: "/test", frequency: 880, seconds: 3, opus: false,
                        name: "DJ Set")
                },
                during: {
                    let answer = try sourceAdmin(
                        port, password: Self.password, "/admin/metadata?mount=/test&mode=updinfo&song=Live+One")
                    #expect(answer.status == 200 && answer.text.contains("<return>1</return>"), "\(answer.head)")
                    // The source's ice-name where the station sets none: the mount's icy-name while it is live.
                    let head = try httpExchange(
                        port, "GET /test.opus HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", seconds: 0.3
                    ).head
                    #expect(head.contains("icy-name: DJ Set"), "\(head)")
                })
            try phase("ffmpeg Ogg Opus", expectedTitle: "FF - Opus Two") {
                try SourceClient.ffmpeg(
                    port: port, password: Self.password, mount: "/test.opus", frequency: 660, seconds: 3, opus: true,
                    artist: "FF", title: "Opus Two")
            }
            try phase("ezstream", expectedTitle: "Ez - Three") {
                try SourceClient.ezstream(port: port, password: Self.password, mount: "/test", file: ezFile)
            }
            try phase("Liquidsoap %mp3", expectedTitle: "Lq - Four") {
                try SourceClient.liquidsoap(
                    port: port, password: Self.password, mount: "/test", file: lqMP3, opus: false)
            }
            try phase("Liquidsoap %opus", expectedTitle: "Lq - Five") {
                try SourceClient.liquidsoap(
                    port: port, password: Self.password, mount: "/test", file: lqOpus, opus: true)
            }
            let end = opusListener.seconds
            #expect(waitUntil(5) { opusListener.seconds > end + 2 })

            // The song history: each source's title, newest first, from the live input, the relay's between; the
            // first DJ's ice-name until its first title.
            let history = try httpGet(station.http, "/test/history.json")
            let entries =
                ((try? JSONSerialization.jsonObject(with: Data(history.body))) as? [String: Any])?["history"]
                as? [[String: String]] ?? []
            print("history: " + entries.map { "\($0["title"] ?? "") (\($0["input"] ?? ""))" }.joined(separator: ", "))
            #expect(
                entries.filter { $0["input"] == "live" }.map { $0["title"] }
                    == ["Lq - Five", "Lq - Four", "Ez - Three", "FF - Opus Two", "Live One", "DJ Set"],
                "\(history.text)")
            #expect(entries.first?["title"] == "Programme" && entries.first?["input"] == "1")
            let stationStatus = try station.station()
            let reasons = stationStatus.switches.map(\.reason)
            #expect(reasons == Array(repeating: ["live", "hand-back"], count: 5).flatMap { $0 }, "\(reasons)")
            #expect(opusListener.process.isRunning && mp3Listener.process.isRunning, "the listeners stayed")
            let (closed, bytes) = crowd.counts
            print("1000 raw listeners: \(closed) closed by the server, \(bytes) bytes read")
            #expect(closed == 0 && bytes > 0)
            let log = station.server.log
            #expect(!log.contains(Self.password), "the password in the log")
            let status = (try? httpGet(station.status, "/status.json").text) ?? ""
            let metrics = (try? httpGet(station.status, "/metrics").text) ?? ""
            #expect(!status.contains(Self.password) && !metrics.contains(Self.password))
            #expect(metrics.contains("radio_relay_live_source_connected{station=\"test\"} 0"))
            // From the source's connection to the switch, by the server's own log times.
            print(
                "connected → plays (s): "
                    + Self.takeoverDelays(log).map { String(format: "%.2f", $0) }.joined(separator: ", "))
            print(
                "takeover after the client started (s): "
                    + takeovers.map { "\($0.client) \(String(format: "%.2f", $0.seconds))" }.joined(separator: ", "))

            let tones = [440.0, 880, 660, 550, 770, 990]
            let timeline = ToneTimeline(opusListener.samples, rate: 16_000, tones: tones)
            print("live sources, the Opus mount (decoded by an ffmpeg listener):\n\(timeline)")
            #expect(timeline.order() == [440, 880, 440, 660, 440, 550, 440, 770, 440, 990, 440], "\(timeline)")
            let gap = timeline.longestGap(from: 3)
            print("longest silence on the Opus mount from the first switch on: \(String(format: "%.2f", gap)) s")
            #expect(gap < 0.5, "\(timeline)")
            // The MP3 pass-through mount: an MP3 source's own frames, silent frames while an Opus source plays.
            let mp3 = ToneTimeline(mp3Listener.samples, rate: 16_000, tones: tones)
            print("live sources, the MP3 mount:\n\(mp3)")
            #expect(mp3.order() == [440, 880, 440, 550, 440, 770, 440], "\(mp3)")
            // Each Opus source is on the air for about 3 s less its takeover (longer on a loaded machine: 2.0 and 3.25 s
            // here, under 2 s in one CI run); a switch's own gap is 50 ms. No other silence of 1 s may be there.
            let silences = mp3.segments.filter { $0.tone == nil && $0.length >= 1 }
            #expect(silences.count == 2, "the two Opus sources are silence on the MP3 mount: \(mp3)")
        }
    }
}
