import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: one real peer at a time.
extension ServerProcessTests {
    /// A station that never goes off the air, with real peers: Icecast (Debian's `icecast2`) serves a primary and a
    /// backup, each an ffmpeg source of its own tone; a file of a third tone is the last resort; an ffmpeg listener
    /// decodes the station all along. The primary is killed, the backup stopped, the primary comes back and then
    /// sends digital silence; the timeline of tones the listener heard, the switches `/status.json` lists and the
    /// titles it showed say what happened, and the listener is never disconnected.
    @Suite(
        .timeLimit(.minutes(2)),
        .enabled(
            if: tool("icecast2") != nil && tool("ffmpeg") != nil, "needs icecast2 and ffmpeg (.ci/deps --test)"))
    struct FailoverTests {
        typealias IcecastServer = ServerProcessTests.IcecastPushTests.IcecastServer

        static let primaryTone = 440.0
        static let backupTone = 660.0
        static let fileTone = 880.0

        /// An ffmpeg process sending `filter` (a lavfi source) as 128 kb/s MP3 to `mount` on `icecast`, at real time.
        final class Source: @unchecked Sendable {
            let process = Process()

            init(_ icecast: IcecastServer, mount: String, filter: String) throws {
                process.executableURL = URL(fileURLWithPath: try #require(tool("ffmpeg")))
                process.arguments = [
                    "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", filter, "-ac", "2", "-c:a",
                    "libmp3lame", "-b:a", "128k", "-content_type", "audio/mpeg", "-f", "mp3",
                    "icecast://source:\(icecast.password)@127.0.0.1:\(icecast.port)\(mount)",
                ]
                process.standardInput = FileHandle.nullDevice
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
            }

            /// Ends it by PID with SIGKILL: the source vanishes mid-stream. (A child of the test process may have
            /// SIGTERM blocked, inherited from the thread that started it, and ffmpeg does not unblock it.)
            func stop() {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
            }
        }

        /// An ffmpeg listener decoding the station's raw TCP stream to 16 kHz mono float samples in a file.
        final class DecodingListener: @unchecked Sendable {
            let process = Process()
            let path = temporaryPath("listener.f32")
            let agent: String

            convenience init(port: UInt16) throws {
                try self.init(url: "tcp://127.0.0.1:\(port)")
            }

            /// A listener of any URL ffmpeg opens (an HTTP mount, an HLS playlist), with its own user agent if given
            /// (the server tells HLS players apart by address and agent).
            init(url: String, agent: String? = nil) throws {
                self.agent = agent ?? "ffmpeg"
                process.executableURL = URL(fileURLWithPath: try #require(tool("ffmpeg")))
                process.arguments =
                    ["-hide_banner", "-loglevel", "error", "-nostdin"]
                    + (agent.map { ["-user_agent", $0] } ?? []) + [
                        "-i", url, "-ac", "1", "-ar", "16000", "-f", "f32le", "-y", path,
                    ]
                process.standardInput = FileHandle.nullDevice
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
            }

            var samples: [Float] {
                guard let data = FileManager.default.contents(atPath: path) else { return [] }
                return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            }

            var seconds: Double { Double(samples.count) / 16_000 }

            func stop() {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                try? FileManager.default.removeItem(atPath: path)
            }
        }

        /// A 20-second MP3 of the file's tone with an ID3 title.
        static func fallbackFile() throws -> String {
            let path = temporaryPath("fallback.mp3")
            _ = try run(
                try #require(tool("ffmpeg")),
                [
                    "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=880:duration=20", "-ac",
                    "2", "-c:a", "libmp3lame", "-b:a", "128k", "-metadata", "title=Fallback Tone", "-y", path,
                ])
            return path
        }

        /// Icecast's admin call that sets a mount's ICY title.
        static func setTitle(_ icecast: IcecastServer, mount: String, _ title: String) throws {
            let credentials = Data("admin:\(icecast.password)".utf8).base64EncodedString()
            let song = title.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? title
            let answer = try httpFetch(
                icecast.port,
                "GET /admin/metadata?mount=\(mount)&mode=updinfo&song=\(song) HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                    + "Authorization: Basic \(credentials)\r\n\r\n")
            try #require(answer.status == 200, "icecast metadata: \(answer.head)")
        }

        @Test func primaryBackupAndFileWithDeadAirDetection() throws {
            let icecast = try IcecastServer(port: try freePort())
            defer { icecast.remove() }
            let file = try Self.fallbackFile()
            defer { try? FileManager.default.removeItem(atPath: file) }
            var primary = try Source(icecast, mount: "/primary.mp3", filter: "sine=frequency=440")
            var backup = try Source(icecast, mount: "/backup.mp3", filter: "sine=frequency=660")
            defer {
                primary.stop()
                backup.stop()
            }
            let base = "http://127.0.0.1:\(icecast.port)"
            let mounted = waitUntil(10) {
                let status = (try? httpGet(icecast.port, "/status-json.xsl").text) ?? ""
                return status.contains("primary.mp3") && status.contains("backup.mp3")
            }
            try #require(mounted, "the sources did not mount: \(icecast.errorLog)")
            try Self.setTitle(icecast, mount: "/primary.mp3", "Primary Tone")
            let station = try ServedStation(
                upstream: "\(base)/primary.mp3",
                [
                    "--upstream", "\(base)/backup.mp3", "--upstream", file, "--standby", "hot", "--recover", "3",
                    "--dead-air", "2", "--crossfade", "0.5", "--reconnect-max", "1", "--stall-timeout", "3",
                ])
            defer { station.stop() }
            func playing() -> String? { (try? station.station())?.playingInput }
            func title() -> String? { (try? station.station())?.title }
            func serverLog() -> String { station.server.log }
            let listener = try DecodingListener(port: station.port)
            defer { listener.stop() }

            // 1. The primary plays, with its title.
            try #require(waitUntil(10) { playing() == "1" && listener.seconds > 2 && title() == "Primary Tone" })
            // 2. The primary is killed: the hot backup plays at once.
            primary.stop()
            let killedAt = listener.seconds
            try #require(waitUntil(10) { playing() == "2" }, "\(serverLog())")
            #expect(waitUntil(5) { listener.seconds > killedAt + 3 })
            // 3. The backup goes too (also killed): the file, with its ID3 title.
            backup.stop()
            try #require(waitUntil(10) { playing() == "3" })
            #expect(waitUntil(5) { title() == "Fallback Tone" }, "title \(String(describing: title()))")
            // 4. The primary comes back (silent from its 9th second to its 15th) and so does the backup: the primary
            //    plays again after `recover`, then dead air moves the station to the backup and back.
            primary = try Source(
                icecast, mount: "/primary.mp3",
                filter: "sine=frequency=440,volume=volume=0:enable='between(t,9,15)'")
            backup = try Source(icecast, mount: "/backup.mp3", filter: "sine=frequency=660")
            let backAt = listener.seconds
            try #require(waitUntil(15) { playing() == "1" })
            _ = waitUntil(30) {
                let reasons = ((try? station.station())?.switches ?? []).map(\.reason)
                return reasons.suffix(2) == ["dead air", "recovered"]
            }
            let doneAt = listener.seconds
            #expect(waitUntil(10) { listener.seconds > doneAt + 2 })
            let stationStatus = try station.station()
            let reasons = stationStatus.switches.map(\.reason)
            #expect(reasons == ["failed", "failed", "recovered", "dead air", "recovered"], "\(serverLog())")
            #expect(stationStatus.connections == 1 && stationStatus.listeners == 1)
            #expect(listener.process.isRunning, "the listener was never disconnected")

            let timeline = ToneTimeline(
                listener.samples, rate: 16_000, tones: [Self.primaryTone, Self.backupTone, Self.fileTone])
            print("failover timeline (decoded by an ffmpeg listener):\n\(timeline)")
            #expect(
                timeline.order() == [440, 660, 880, 440, 660, 440], "\(timeline)")
            // Hot standby: the kill of the primary is heard as no gap at all, the backup's end neither (the file was
            // hot too); the primary's return is a crossfade.
            let gap = timeline.longestGap(from: killedAt - 1, to: backAt)
            print("longest silence around the two failures: \(String(format: "%.2f", gap)) s")
            #expect(gap < 0.3, "\(timeline)")
            // Dead air: the primary's silence starts 9 s into its second run; the backup within 2–3.5 s of it.
            let silence = timeline.segments.first { segment in
                segment.tone == nil && segment.start > backAt + 8 && segment.length >= 0.3
            }
            if let silentFrom = silence?.start, let backupFrom = timeline.start(of: 660, after: silentFrom) {
                let delay: Double = backupFrom - silentFrom
                print("dead air: silence from \(silentFrom) s, backup from \(backupFrom) s")
                #expect(delay >= 1.8 && delay <= 3.5, "\(timeline)")
            } else {
                Issue.record("no dead air in the timeline:\n\(timeline)")
            }
        }

        /// A 60-second MP3 of `frequency` (both channels).
        static func toneFile(_ frequency: Int) throws -> String {
            let path = temporaryPath("tone-\(frequency).mp3")
            _ = try run(
                try #require(tool("ffmpeg")),
                [
                    "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                    "sine=frequency=\(frequency):duration=60", "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", "-y",
                    path,
                ])
            return path
        }

        /// A root relay: the binary serving `file` on `port`.
        static func root(_ file: String, port: UInt16) throws -> ServerProcessTests.ServerProcess {
            try ServerProcessTests.ServerProcess(arguments: [
                "serve", "--upstream", file, "--name", "root", "--bind", "127.0.0.1", "--port", "\(port)",
            ])
        }

        /// An edge with two roots (440 Hz and 660 Hz): the first is killed, then started again on its port. The edge's
        /// raw listener hears the second root at once (hot standby), the first again after `recover`, no hole
        /// longer than a switch's, one valid Ogg stream (oggz-validate), and is never disconnected.
        @Test(.enabled(if: tool("oggz-validate") != nil, "needs oggz-validate (Debian: oggz-tools)"))
        func anEdgeFailsOverBetweenTwoRoots() throws {
            let first = try Self.toneFile(440)
            let second = try Self.toneFile(660)
            defer {
                try? FileManager.default.removeItem(atPath: first)
                try? FileManager.default.removeItem(atPath: second)
            }
            let firstPort = try freePort()
            var rootA = try Self.root(first, port: firstPort)
            let rootB = try Self.root(second, port: try freePort())
            defer {
                rootA.stop()
                rootB.stop()
            }
            let edge = try ServedStation(
                upstream: "tcp://127.0.0.1:\(firstPort)",
                ["--upstream", "tcp://127.0.0.1:\(rootB.port)", "--standby", "hot", "--recover", "2"])
            defer { edge.stop() }
            func playing() -> String? { (try? edge.station())?.playingInput }
            try #require(waitUntil(10) { playing() == "1" && ((try? edge.station())?.packets ?? 0) > 50 })
            let reader = try ServerProcessTests.Reader(port: edge.port)
            usleep(3_000_000)
            rootA.signal(SIGKILL)
            rootA.process.waitUntilExit()
            try #require(waitUntil(10) { playing() == "2" }, "\(edge.server.log)")
            usleep(3_000_000)
            rootA = try Self.root(first, port: firstPort)
            try #require(waitUntil(10) { playing() == "1" }, "\(edge.server.log)")
            usleep(3_000_000)
            let (bytes, closed) = reader.finish()
            #expect(!closed, "the edge's listener was disconnected")
            let path = temporaryPath("edge.opus")
            try Data(try ChainedCapture.closed(bytes)).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let validation = try run(try #require(tool("oggz-validate")), [path])
            #expect(validation.status == 0, "oggz-validate: \(validation.stdout) \(validation.stderr)")
            let capture = try LiveCapture(bytes)
            #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            let timeline = ToneTimeline(capture.left, rate: 48_000, tones: [440, 660])
            print("edge timeline (decoded):\n\(timeline)")
            #expect(timeline.order() == [440, 660, 440], "\(timeline)")
            let gap = timeline.longestGap(from: 0.5)
            print("edge: longest hole \(String(format: "%.2f", gap)) s")
            #expect(gap < 0.5, "\(timeline)")
            let reasons = try edge.station().switches.map {
                $0.reason
            }
            #expect(reasons == ["failed", "recovered"])
        }
    }
}
