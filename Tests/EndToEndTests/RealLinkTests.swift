import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: a relay tree over real links, in network namespaces (`NetworkLab`): two roots (440 Hz and
/// 660 Hz files), an edge listing both (`standby = hot`, `stall_timeout = 3`), and an ffmpeg listener decoding the
/// edge from a namespace of its own. root1's link is blackholed (no FIN, no RST: the edge's connection stays
/// "established" and receives nothing) and lifted, then made lossy (3 % each way) at twice the stream's rate; last,
/// 30 listeners lose their path and must all be released within the bound, with no FIN-WAIT-1 socket left.
extension DiskTests {
    @Suite(
        .timeLimit(.minutes(2)),
        .enabled(
            if: tool("ffmpeg") != nil && tool("curl") != nil && tool("ip") != nil && tool("nft") != nil
                && tool("tc") != nil && tool("ss") != nil && tool("python3") != nil,
            "needs ffmpeg, curl, iproute2, nftables and python3 (.ci/deps --test)"))
    struct RealLinkTests {
        static let statusPort = 9000
        static let port = 8000

        /// The binary serving on `0.0.0.0:8000` in `node`, its status on the namespace's 127.0.0.1:9000.
        static func relay(_ lab: NetworkLab, _ node: String, _ arguments: [String], log: String) throws -> Process {
            let process = try lab.process(
                node, try #require(radioRelayExecutable()),
                [
                    "serve", "--name", node, "--bind", "0.0.0.0", "--port", "\(port)", "--status",
                    "127.0.0.1:\(statusPort)",
                ] + arguments)
            process.standardOutput = FileHandle.nullDevice
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            try process.run()
            return process
        }

        /// `/status.json`'s station, read with curl (the suite needs it) inside the node's namespace; nil until it
        /// answers.
        static func station(_ lab: NetworkLab, _ node: String) -> StationStatus? {
            let curl = tool("curl") ?? "/usr/bin/curl"
            guard
                let answer = try? lab.run(
                    in: node, curl, ["-s", "--max-time", "2", "http://127.0.0.1:\(statusPort)/status.json"]),
                let snapshot = try? JSONDecoder().decode(StatusSnapshot.self, from: Data(answer.stdout.utf8))
            else { return nil }
            return snapshot.stations.first
        }

        /// Python: N raw listeners of HOST:PORT that read all they are sent, until killed.
        static let readers = """
            import select, socket, sys, time
            host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
            sockets = [socket.create_connection((host, port), timeout=5) for _ in range(n)]
            while True:
                ready = select.select(sockets, [], [], 1)[0] if sockets else time.sleep(1) or []
                for s in ready:
                    try:
                        data = s.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        sockets.remove(s)
            """

        static func stop(_ process: Process) {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }

        @Test func anEdgeRidesOutABlackholedRootAndALossyLink() throws {
            let lab = try NetworkLab(nodes: ["root1", "root2", "edge", "listeners"])
            let names = lab.namespaces
            #expect(names.count == 5, "\(names)")
            let first = try ServerProcessTests.FailoverTests.toneFile(440)
            let second = try ServerProcessTests.FailoverTests.toneFile(660)
            let capture = temporaryPath("link-listener.f32")
            let logs = (0..<3).map { temporaryPath("link-relay-\($0).log") }
            var processes: [Process] = []
            defer {
                for process in processes.reversed() { Self.stop(process) }
                lab.down()
                for path in [first, second, capture] + logs { try? FileManager.default.removeItem(atPath: path) }
            }
            processes.append(try Self.relay(lab, "root1", ["--upstream", first], log: logs[0]))
            processes.append(try Self.relay(lab, "root2", ["--upstream", second], log: logs[1]))
            // Both roots play before the edge starts: its first choice is root1, with no failure on the way.
            for root in ["root1", "root2"] {
                try #require(waitUntil(20) { Self.station(lab, root)?.playingInput == "1" }, "\(root)")
            }
            let roots = ["root1", "root2"].map { "tcp://\(lab.addresses[$0] ?? ""):\(Self.port)" }
            processes.append(
                try Self.relay(
                    lab, "edge",
                    [
                        "--upstream", roots[0], "--upstream", roots[1], "--standby", "hot", "--stall-timeout", "3",
                        "--recover", "5", "--peer-timeout", "5", "--max-lag", "2",
                    ], log: logs[2]))
            func edgeLog() -> String { (try? String(contentsOfFile: logs[2], encoding: .utf8)) ?? "" }
            func playing() -> String? { Self.station(lab, "edge")?.playingInput }
            try #require(waitUntil(20) { playing() == "1" }, "the edge does not play root1:\n\(edgeLog())")
            let edgeAddress = try #require(lab.addresses["edge"])
            let listener = try lab.process(
                "listeners", try #require(tool("ffmpeg")),
                [
                    "-hide_banner", "-loglevel", "error", "-i", "tcp://\(edgeAddress):\(Self.port)", "-ac", "1", "-ar",
                    "16000", "-f", "f32le", "-y", capture,
                ])
            listener.standardOutput = FileHandle.nullDevice
            listener.standardError = FileHandle.nullDevice
            try listener.run()
            processes.append(listener)
            func heard() -> Double {
                Double((try? FileManager.default.attributesOfItem(atPath: capture)[.size] as? Int) ?? 0) / 64_000
            }
            try #require(waitUntil(20) { heard() > 6 })

            // The blackhole: the edge must switch to root2 before its lead runs out (the late rule), not after
            // stall_timeout, and keep root1's connection until the stall rule ends it.
            let blackholedAt = heard()
            let start = Date()
            try lab.link("root1", blackhole: true)
            try #require(waitUntil(6) { playing() == "2" }, "no switch to root2:\n\(edgeLog())")
            let switchSeconds = Date().timeIntervalSince(start)
            try #require(waitUntil(10) { edgeLog().contains("stalled") }, "root1 never stalled:\n\(edgeLog())")
            usleep(2_000_000)
            let liftedAt = heard()
            try lab.link("root1", blackhole: false)
            let lift = Date()
            try #require(waitUntil(20) { playing() == "1" }, "root1 never played again:\n\(edgeLog())")
            let returnSeconds = Date().timeIntervalSince(lift)

            // Loss: 3 % of the packets each way, on a link of twice the stream's rate, for 20 s.
            try lab.link("root1", rate: 200, loss: 3)
            let lossFrom = heard()
            usleep(20_000_000)
            let lossTo = heard()
            let edgeStatus = Self.station(lab, "edge")
            let reasons = (edgeStatus?.switches ?? []).map(\.reason)
            #expect(edgeStatus?.listeners == 1, "the decoding listener was dropped:\n\(edgeLog())")
            Self.stop(listener)

            let data = try Data(contentsOf: URL(fileURLWithPath: capture))
            let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            let timeline = ToneTimeline(samples, rate: 16_000, tones: [440, 660])
            print(
                "real links: switch \(String(format: "%.2f", switchSeconds)) s after the blackhole, back to root1 "
                    + "\(String(format: "%.2f", returnSeconds)) s after the lift; heard at the blackhole "
                    + "\(String(format: "%.2f", blackholedAt)) s, lift \(String(format: "%.2f", liftedAt)) s, loss "
                    + "\(String(format: "%.2f", lossFrom))–\(String(format: "%.2f", lossTo)) s\n\(timeline)")
            #expect(switchSeconds < 2, "the switch waited for the stall rule:\n\(edgeLog())")
            #expect(returnSeconds > 4 && returnSeconds < 10, "recover is 5 s:\n\(edgeLog())")
            #expect(timeline.order() == [440, 660, 440], "\(timeline)")
            // No hole but the windows a crossfade between the two tones blurs, from the first second on.
            let hole = timeline.longestGap(from: 1)
            #expect(hole < 0.2, "a hole of \(hole) s:\n\(timeline)\n\(edgeLog())")
            #expect(reasons == ["late", "recovered"], "\(reasons)\n\(edgeLog())")
            #expect(timeline.longestGap(from: lossFrom, to: lossTo) < 0.1, "\(timeline)\n\(edgeLog())")

            // 30 listeners whose path dies (their namespace's link blackholed): all released within the bound
            // (peer_timeout 5 s, which covers twice max_lag 2 s: TCP_USER_TIMEOUT), each with a RST, so no
            // FIN-WAIT-1 socket keeps its unsent bytes in the edge's kernel.
            let readers = try lab.process(
                "listeners", try #require(tool("python3")), ["-c", Self.readers, edgeAddress, "\(Self.port)", "30"])
            readers.standardOutput = FileHandle.nullDevice
            readers.standardError = FileHandle.nullDevice
            try readers.run()
            processes.append(readers)
            func listeners() -> Int { Self.station(lab, "edge")?.listeners ?? -1 }
            try #require(waitUntil(10) { listeners() == 30 }, "\(listeners()) listeners")
            usleep(2_000_000)
            try lab.link("listeners", blackhole: true)
            let blackholed = Date()
            let released = waitUntil(20) { listeners() == 0 }
            let releaseSeconds = Date().timeIntervalSince(blackholed)
            let sockets = try lab.run(in: "edge", try #require(tool("ss")), ["-tanH", "state", "fin-wait-1"])
            let finWait = sockets.stdout.split(separator: "\n").count
            print(
                "real links: 30 listeners behind a dead path released in \(String(format: "%.1f", releaseSeconds)) s; "
                    + "FIN-WAIT-1 sockets on the edge: \(finWait)")
            #expect(released && releaseSeconds < 12, "\(listeners()) listeners left after \(releaseSeconds) s")
            #expect(finWait == 0, "\(sockets.stdout)")

            lab.down()
            #expect(lab.namespaces.isEmpty, "\(lab.namespaces) left behind")
        }
    }
}
