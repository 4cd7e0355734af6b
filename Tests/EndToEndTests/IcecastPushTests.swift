import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: Icecast with one source and a listener or two is a light peer (see `PeerTests`).
extension ServerProcessTests {
    /// A station pushing to a real Icecast (Debian's `icecast2`, 2.4.4), started by the test on a free port: Icecast's
    /// listeners hear the station's audio, the push survives an Icecast restart by itself, a refused push says why, and
    /// none of it touches the station's own listeners.
    @Suite(.timeLimit(.minutes(2)), .enabled(if: tool("icecast2") != nil, "needs icecast2 (.ci/deps --test)"))
    struct IcecastPushTests {
        /// `icecast2 -c FILE` with a minimal config in a temporary directory, stopped by its PID.
        final class IcecastServer: @unchecked Sendable {
            let port: UInt16
            let password = "pw-\(UUID().uuidString.prefix(8))"
            let directory = temporaryPath("icecast")
            private var process: Process?

            /// - Parameter mounts: `<mount>` elements of the config (listener authentication, say).
            init(port: UInt16, mounts: String = "") throws {
                self.port = port
                try FileManager.default.createDirectory(atPath: directory + "/log", withIntermediateDirectories: true)
                // As root, Icecast binds and then becomes Debian's icecast2 user, which must be able to write its logs.
                let changeOwner: String
                if getuid() == 0, let user = getpwnam("icecast2"), let group = getgrnam("icecast") {
                    chown(directory + "/log", user.pointee.pw_uid, group.pointee.gr_gid)
                    changeOwner = "<changeowner><user>icecast2</user><group>icecast</group></changeowner>"
                } else {
                    changeOwner = ""
                }
                let config = """
                    <icecast>
                        <location>Earth</location><admin>icemaster@localhost</admin>
                        <limits><clients>20</clients><sources>4</sources><source-timeout>10</source-timeout></limits>
                        <authentication>
                            <source-password>\(password)</source-password>
                            <admin-user>admin</admin-user><admin-password>\(password)</admin-password>
                        </authentication>
                        <hostname>127.0.0.1</hostname>
                        <listen-socket><port>\(port)</port><bind-address>127.0.0.1</bind-address></listen-socket>
                        \(mounts)
                        <paths>
                            <basedir>/usr/share/icecast2</basedir><logdir>\(directory)/log</logdir>
                            <webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot>
                        </paths>
                        <logging>
                            <errorlog>error.log</errorlog><accesslog>access.log</accesslog><loglevel>3</loglevel>
                        </logging>
                        <security><chroot>0</chroot>\(changeOwner)</security>
                    </icecast>
                    """
                try config.write(toFile: directory + "/icecast.xml", atomically: false, encoding: .utf8)
                try start()
            }

            /// Starts Icecast and waits until it accepts connections.
            func start() throws {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: try #require(tool("icecast2")))
                process.arguments = ["-c", directory + "/icecast.xml"]
                process.standardInput = FileHandle.nullDevice
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                self.process = process
                // Its own answer, not just a connection: whatever listens on the port is this Icecast.
                let answering = waitUntil(10) {
                    process.isRunning
                        && ((try? httpFetch(self.port, "GET /status-json.xsl HTTP/1.0\r\n\r\n"))?.text ?? "")
                            .contains("icestats")
                }
                try #require(answering, "icecast2 did not answer on \(port): \(state)")
            }

            /// Whether it still runs (its exit status if not) and its error log: for a failure's message.
            var state: String {
                guard let process else { return "not started" }
                let running = process.isRunning ? "running" : "exited \(process.terminationStatus)"
                return "icecast2 PID \(process.processIdentifier) \(running); error.log: \(errorLog.suffix(1_500))"
            }

            /// SIGTERM by PID, then waits for it to end.
            func stop() {
                guard let process else { return }
                self.process = nil
                if process.isRunning { kill(process.processIdentifier, SIGTERM) }
                process.waitUntilExit()
            }

            var errorLog: String { (try? String(contentsOfFile: directory + "/log/error.log", encoding: .utf8)) ?? "" }

            func remove() {
                stop()
                try? FileManager.default.removeItem(atPath: directory)
            }

            /// What an HTTP listener of `mount` receives in `seconds`: the response head and the body.
            func listen(_ mount: String, seconds: Double) throws -> (head: String, body: [UInt8]) {
                let client = try ListenerClient(port: port)
                defer { client.close() }
                client.send("GET \(mount) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                let (bytes, _) = client.read(for: seconds)
                let separator = Array("\r\n\r\n".utf8)
                guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
                    return (String(decoding: bytes, as: UTF8.self), [])
                }
                return (String(decoding: bytes[..<end], as: UTF8.self), Array(bytes[(end + 4)...]))
            }
        }

        /// The push URL of `mount` on `icecast` (with `password`, by default the right one).
        static func target(_ icecast: IcecastServer, _ mount: String, password: String? = nil) -> String {
            "icecast://source:\(password ?? icecast.password)@127.0.0.1:\(icecast.port)\(mount)"
        }

        /// The binary serving the stereo fixture and pushing it to `targets`.
        static func station(pushingTo targets: [String]) throws -> ServedStation {
            try ServedStation(
                ["--display-name", "Push FM", "--genre", "test tones"] + targets.flatMap { ["--push", $0] })
        }

        /// The state of the station's first push, as `/status.json` says.
        static func state(_ station: ServedStation) -> String? {
            (try? station.pushes().first)??.state.rawValue
        }

        /// The audio Icecast serves is the station's (440 Hz left, 1 kHz right, amplitude 0.475), as one valid Ogg
        /// Opus stream.
        static func expectStationAudio(_ body: [UInt8], _ label: String) throws {
            let capture = try LiveCapture(body)
            #expect(capture.headerOK, "\(label): no OpusHead/OpusTags first")
            #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0, "\(label)")
            #expect(Double(capture.left.count) / 48_000 > 2, "\(label): \(capture.left.count) samples")
            #expect(abs(capture.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.05, "\(label)")
            #expect(abs(capture.medianAmplitude(left: false, frequency: 1000) - 0.475) < 0.05, "\(label)")
            #expect(capture.medianAmplitude(left: true, frequency: 1000) < 0.02, "\(label)")
        }

        @Test func aStationPushesToIcecastAndSurvivesItsRestart() throws {
            let icecast = try IcecastServer(port: try freePort())
            defer { icecast.remove() }
            let station = try Self.station(pushingTo: [Self.target(icecast, "/push.opus")])
            defer { station.stop() }
            // The station's own listener, from before the push connects until after Icecast came back.
            let own = try ServerProcessTests.Reader(port: station.port)

            #expect(
                waitUntil(10) { Self.state(station) == "connected" },
                "\((try? station.pushes()) ?? []); \(icecast.state)")
            let (head, body) = try icecast.listen("/push.opus", seconds: 4)
            #expect(head.hasPrefix("HTTP/1.0 200"), "\(head)")
            #expect(
                head.lowercased().contains("icy-name:push fm") && head.lowercased().contains("icy-genre:test tones"))
            #expect(head.lowercased().contains("icy-pub:0"), "\(head)")
            try Self.expectStationAudio(body, "Icecast listener")
            if let ffprobe = tool("ffprobe") {
                let file = temporaryPath("push.opus")
                defer { try? FileManager.default.removeItem(atPath: file) }
                try Data(body).write(to: URL(fileURLWithPath: file))
                let probe = try run(
                    ffprobe,
                    ["-v", "error", "-show_entries", "stream=codec_name,channels,sample_rate", "-of", "csv=p=0", file])
                #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "opus,48000,2", "\(probe)")
            }

            // Icecast goes away and comes back on the same port: the push notices, retries and reconnects by itself.
            icecast.stop()
            #expect(waitUntil(5) { Self.state(station) == "retrying" }, "\((try? station.pushes()) ?? [])")
            usleep(500_000)
            try icecast.start()
            let restarted = Date()
            #expect(
                waitUntil(20) { Self.state(station) == "connected" },
                "\((try? station.pushes()) ?? []); \(icecast.state)")
            let back = Date().timeIntervalSince(restarted)
            let (_, again) = try icecast.listen("/push.opus", seconds: 3)
            try Self.expectStationAudio(again, "Icecast listener after the restart")
            let status = try #require(try station.pushes().first)
            #expect(
                status.reconnects >= 1 && status.lastError != nil && status.bytesSent > 50_000, "\(status)")
            #expect(status.target == "icecast://***@127.0.0.1:\(icecast.port)/push.opus")
            print("push: connected again \(String(format: "%.2f", back)) s after Icecast restarted; \(status)")

            // The station's own listener never noticed.
            let (ownBytes, closed) = own.finish()
            #expect(!closed)
            let capture = try LiveCapture(ownBytes)
            #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            #expect(abs(capture.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.05)
        }

        /// A reload that adds and removes pushes leaves the unchanged one connected, and the station goes on.
        @Test func aReloadChangesOnlyThePushesThatChanged() throws {
            let icecast = try IcecastServer(port: try freePort())
            defer { icecast.remove() }
            let (first, second) = (Self.target(icecast, "/a.opus"), Self.target(icecast, "/b.opus"))
            let (status, port) = (try freePort(), try freePort())
            let path = temporaryPath("push-reload.conf")
            defer { unlink(path) }
            func write(_ pushes: [String]) throws {
                try """
                [server]
                status = 127.0.0.1:\(status)
                [station test]
                upstream = \(Fixture.path("stereo-44k-128k.mp3"))
                bind = 127.0.0.1
                port = \(port)
                display_name = Push FM
                \(pushes.map { "push = \($0)" }.joined(separator: "\n"))

                """.write(toFile: path, atomically: true, encoding: .utf8)
            }
            try write([first])
            let server = try ServerProcessTests.ServerProcess(arguments: ["--config", path])
            defer { server.stop() }
            func pushes() -> [PushStatus] { (try? statusStations(status).first?.pushes) ?? [] }
            func states() -> [String] { pushes().map(\.state.rawValue) }
            /// What the push to `mount` has sent (-1 when there is none): a push kept across a reload goes on
            /// counting, a new one starts from 0.
            func sent(_ mount: String) -> Int {
                pushes().first { $0.target.hasSuffix(mount) }?.bytesSent ?? -1
            }
            #expect(waitUntil(15) { states() == ["connected"] && sent("/a.opus") > 60_000 }, "\(pushes())")
            let firstSent = sent("/a.opus")
            try write([first, second])
            server.signal(SIGHUP)
            #expect(waitUntil(10) { states() == ["connected", "connected"] }, "\(pushes())")
            #expect(sent("/a.opus") >= firstSent, "the first push kept its connection: \(pushes())")
            #expect(pushes().map(\.reconnects) == [0, 0], "\(pushes())")
            #expect(waitUntil(15) { sent("/b.opus") > 60_000 }, "\(pushes())")
            let secondSent = sent("/b.opus")
            try write([second])
            server.signal(SIGHUP)
            #expect(waitUntil(10) { pushes().count == 1 && states() == ["connected"] }, "\(pushes())")
            #expect(pushes().first?.target == "icecast://***@127.0.0.1:\(icecast.port)/b.opus")
            #expect(sent("/b.opus") >= secondSent, "the second push kept its connection: \(pushes())")
            #expect(pushes().first?.reconnects == 0, "\(pushes())")
            try Self.expectStationAudio(try icecast.listen("/b.opus", seconds: 3).body, "the pushed mount")
            #expect(
                try icecast.listen("/a.opus", seconds: 0.5).head.hasPrefix("HTTP/1.0 404"), "the removed push ended")
            #expect(!server.log.contains(icecast.password), "a password in the log")
        }

        @Test func aRefusedPushSaysWhyAndKeepsTrying() throws {
            let icecast = try IcecastServer(port: try freePort())
            defer { icecast.remove() }
            let station = try Self.station(pushingTo: [Self.target(icecast, "/refused.opus", password: "wrong")])
            defer { station.stop() }
            func reconnects() -> Int { (try? station.pushes().first)??.reconnects ?? 0 }
            #expect(waitUntil(10) { reconnects() >= 2 }, "\((try? station.pushes()) ?? [])")
            let status = try #require(try station.pushes().first)
            #expect(status.state == .retrying || status.state == .connecting)
            #expect(
                status.lastError
                    == "Icecast answered HTTP 401: You need to authenticate (check the user and source password)")
            #expect(status.bytesSent == 0, "Expect: 100-continue: no audio before the password is accepted")
            let (bytes, _) = try ListenerClient(port: station.port).read(for: 1.5)
            #expect(try LiveCapture(bytes).headerOK, "the station's own listeners are served")
        }
    }
}
