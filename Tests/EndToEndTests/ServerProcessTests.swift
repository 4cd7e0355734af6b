import Foundation
import RadioRelayTestSupport
import Testing

/// The real binary as a process, under faults only a whole process can have: stopped with SIGSTOP while listeners are
/// connected, fed a title that tries to forge log lines, out of descriptors, bursted by its upstream (that one in
/// `ReconnectBurstTests`, nested here).
///
/// The first of the two lanes of end-to-end tests (the other is `PeerTests`): one test at a time.
@Suite(.timeLimit(.minutes(2)), .serialized) struct ServerProcessTests {
    /// A running `radio-relay serve`, its stderr collected; stopped (by its PID) when the test ends.
    final class ServerProcess: @unchecked Sendable {
        let process = Process()
        /// Its stderr goes to a file, read whenever the test looks.
        private let logPath = temporaryPath("server.log")
        private(set) var port: UInt16 = 0

        /// - Parameter wrapper: a program and its arguments that run the binary (given as its next arguments, then
        ///   `arguments`) after preparing something, with `exec` so that the process is the server (a mount namespace
        ///   with its own file system: `ArchiveBinaryTests`).
        init(arguments: [String], environment: [String: String] = [:], wrapper: [String] = []) throws {
            let executable = try #require(
                radioRelayExecutable(),
                "no radio-relay binary: set RADIO_RELAY_BINARY, or build one (swift build -c release --product radio-relay)"
            )
            if let program = wrapper.first {
                process.executableURL = URL(fileURLWithPath: program)
                process.arguments = wrapper.dropFirst() + [executable] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = arguments
            }
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            try #require(FileManager.default.createFile(atPath: logPath, contents: nil))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            try process.run()
            // The port it bound, from its start-up line ("… on 127.0.0.1:PORT (listen: …"); a station with no raw
            // port ("with no raw TCP port"), once its HTTP address listens.
            let deadline = Date().addingTimeInterval(10)
            var httpOnly = false
            while Date() < deadline {
                let text = log
                if let range = text.range(of: #"on 127\.0\.0\.1:([0-9]+) "#, options: .regularExpression) {
                    port = UInt16(text[range].dropFirst("on 127.0.0.1:".count).dropLast()) ?? 0
                    break
                }
                if text.contains("with no raw TCP port") && text.contains("http listeners on") {
                    httpOnly = true
                    break
                }
                if !process.isRunning { break }
                usleep(20_000)
            }
            try #require(port != 0 || httpOnly, "no listening address in the log:\n\(log)")
        }

        var log: String {
            (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        }

        /// Whether the log holds `text` within `seconds`: the server writes its log on a thread of its own, so a
        /// line about what just happened may come a moment after the answer that showed it.
        func logged(_ text: String, within seconds: Double = 5) -> Bool { waitUntil(seconds) { log.contains(text) } }

        /// Signals the server while it is this test's child: once Foundation has reaped it, its PID may be another
        /// process's (PIDs wrap at 32 768 here, and the lanes start thousands of processes).
        func signal(_ number: Int32) { if process.isRunning { kill(process.processIdentifier, number) } }

        /// Whether the process has exited: it is a zombie (or gone) in `/proc`. Foundation's `isRunning` and
        /// `waitUntilExit` learn of an exit only when its SIGCHLD handling reaps the child, which can come seconds
        /// late while other tests' children come and go (measured: 3 s and 11 s beside `SystemdTests`, the server's
        /// own "stopped" line 22 ms after SIGTERM).
        var hasExited: Bool {
            let pid = process.processIdentifier
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"), stat.distance(from: close, to: stat.endIndex) > 2
            else { return true }
            let state = stat[stat.index(close, offsetBy: 2)]
            return state == "Z" || state == "X"
        }

        /// Seconds until the process has exited (`hasExited`), at most `limit` waited.
        func waitForExit(limit: Double = 20) -> Double {
            let start = Date()
            while process.isRunning && !hasExited && Date().timeIntervalSince(start) < limit { usleep(10_000) }
            return Date().timeIntervalSince(start)
        }

        func stop() {
            if process.isRunning {
                signal(SIGCONT)
                signal(SIGTERM)
            }
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: logPath)
        }
    }

    /// Reads one listener's stream on its own thread until told to stop.
    final class Reader: @unchecked Sendable {
        private let client: ListenerClient
        private let lock = NSLock()
        private var bytes: [UInt8] = []
        private var closed = false
        private let stopFlag = ManagedFlag()
        private let finished = DispatchSemaphore(value: 0)

        init(port: UInt16) throws {
            client = try ListenerClient(port: port)
            DispatchQueue.global().async { [self] in
                while !stopFlag.isSet {
                    let (chunk, ended) = client.read(for: 0.25)
                    lock.lock()
                    bytes += chunk
                    closed = closed || ended
                    lock.unlock()
                    if ended { break }
                }
                finished.signal()
            }
        }

        /// Bytes received so far.
        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return bytes.count
        }

        func finish() -> (bytes: [UInt8], closed: Bool) {
            stopFlag.set()
            _ = finished.wait(timeout: .now() + 5)
            client.close()
            lock.lock()
            defer { lock.unlock() }
            return (bytes, closed)
        }
    }

    /// A blocking TCP socket connected (or trying to) to 127.0.0.1:`port`; -1 when no socket could be made.
    static func rawConnect(_ port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return fd
    }

    /// SIGSTOP with three listeners connected, as a debugger or an overloaded host would pause the process. The rule
    /// (a pause moves the stream clock on; no listener is moved or dropped for it) is proven on virtual time for 30
    /// and 60 s stops (StreamClockTests, ListenerScheduleTests); here 6 s show it holds in the real process.
    @Test func aStopCostsNoListenerAndLogTextStaysHarmless() throws {
        let audio = try Fixture.bytes("stereo-44k-128k.mp3")
        let title = "Artist – Title\n<0>forged\u{1B}[31mred\u{202E}"
        // One ICY stream of 36 s (metadata positions count from the start of the response, so no repeats).
        let body = icyStream(Array([[UInt8]](repeating: audio, count: 12).joined()), interval: 4096, title: title)
        let upstream = try HTTPTestServer { _ in
            .init(
                headers: ["icy-metaint": "4096", "icy-name": "Name\u{1B}[2J\u{202E}"], body: body, pace: 16_400)
        }
        defer { upstream.stop() }
        let server = try ServerProcess(arguments: [
            "serve", "--upstream", upstream.baseURL + "/live.mp3", "--bind", "127.0.0.1", "--port",
            "\(try freePort())",
            "--name", "e2e", "--max-lag", "10", "--log-level", "debug",
        ])
        defer { server.stop() }
        try #require(waitUntil(10) { server.log.contains("now playing:") }, "no title:\n\(server.log)")
        let readers = try (0..<3).map { _ in try Reader(port: server.port) }
        usleep(2_000_000)  // 2 s of live listening before the stop
        server.signal(SIGSTOP)
        sleep(6)
        server.signal(SIGCONT)
        #expect(waitUntil(10) { server.log.contains("did not run for") }, "the pause was not reported:\n\(server.log)")
        usleep(4_000_000)  // 4 s of listening after it
        #expect(server.process.isRunning, "the server died:\n\(server.log)")
        for (index, reader) in readers.enumerated() {
            let (bytes, closed) = reader.finish()
            #expect(!closed, "listener \(index) was disconnected")
            let capture = try LiveCapture(bytes)
            #expect(capture.headerOK, "listener \(index)")
            #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0, "listener \(index)")
            // The 2 s burst, 2 s before the stop, at least 4 s after it: more than 7 s of audio, and the tones.
            #expect(Double(capture.left.count) / 48_000 > 7, "listener \(index): \(capture.left.count) samples")
            #expect(
                abs(capture.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.05,
                "listener \(index): \(capture.amplitudes(left: true, frequency: 440))")
        }
        let log = server.log
        #expect(!log.contains("moved to the live edge") && !log.contains("too slow"), "\(log)")
        #expect(log.contains("now playing: Artist – Title<0>forged[31mred"), "\(log)")
        #expect(log.contains("\"Name[2J\""), "\(log)")
        // No line of the log was started by upstream text, and no escape character reached it.
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("<0>") || $0.hasPrefix("forged") })
        #expect(!log.contains("\u{1B}") && !log.contains("\u{202E}"))
    }

    /// The hard RLIMIT_NOFILE of a process, from /proc/PID/limits.
    static func hardDescriptorLimit(_ pid: Int32) -> String? {
        guard let limits = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
            let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        let fields = line.split(separator: " ")
        return fields.count >= 5 ? String(fields[4]) : nil
    }

    /// CPU seconds (user + system) of a process so far, from /proc/PID/stat.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return .nan }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return .nan }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Out of descriptors: the running server's limit is lowered (prlimit) below what a crowd of connections needs,
    /// so accept4 fails with EMFILE for real. It must not spin, must log a bounded number of lines, must keep
    /// serving the listener it has, and must serve new listeners once descriptors are free again.
    @Test(.enabled(if: tool("prlimit") != nil, "needs prlimit (util-linux)"))
    func runningOutOfDescriptorsDoesNotSpin() throws {
        let fixture = Fixture.path("stereo-44k-128k.mp3")
        let server = try ServerProcess(arguments: [
            "serve", "--upstream", fixture, "--bind", "127.0.0.1", "--port", "\(try freePort())", "--name", "fd",
        ])
        defer { server.stop() }
        let pid = server.process.processIdentifier
        let existing = try Reader(port: server.port)
        let connected = Date()
        try #require(waitUntil(5) { existing.count > 4096 }, "the first listener got nothing")
        // The soft limit only (raising a hard limit again needs a privilege the test may not have).
        let hard = try #require(Self.hardDescriptorLimit(pid))
        let limit = try run(try #require(tool("prlimit")), ["--pid", "\(pid)", "--nofile=40:\(hard)"])
        try #require(limit.status == 0, "prlimit: \(limit.stderr)")
        let linesBefore = server.log.split(separator: "\n").count
        // 200 connections against a limit of 40: most wait in the backlog or fail to be accepted.
        var crowd: [Int32] = []
        for _ in 0..<200 {
            let fd = Self.rawConnect(server.port)
            guard fd >= 0 else { break }
            crowd.append(fd)
        }
        let cpuBefore = Self.cpuSeconds(pid)
        sleep(4)  // the window the CPU time is measured over
        let cpu = (Self.cpuSeconds(pid) - cpuBefore) / 4
        #expect(cpu < 0.05, "the server used \(Int(cpu * 100)) % of a core while out of descriptors")
        let lines = server.log.split(separator: "\n")
        print(
            "out of descriptors: \(String(format: "%.1f", cpu * 100)) % of a core, \(lines.count - linesBefore) log lines in 4 s"
        )
        #expect(lines.count - linesBefore < 60, "\(lines.count - linesBefore) log lines in 4 s:\n\(server.log)")
        #expect(server.logged("cannot accept"), "no accept failure reported:\n\(server.log)")
        // Descriptors free again: the crowd leaves, the limit goes back up, a new listener is served.
        for fd in crowd { close(fd) }
        let raised = try run(try #require(tool("prlimit")), ["--pid", "\(pid)", "--nofile=\(hard):\(hard)"])
        try #require(raised.status == 0)
        // A new listener is served again once the back-off lets the server accept (poll, at most 10 s).
        var served = false
        let deadline = Date().addingTimeInterval(10)
        while !served && Date() < deadline {
            let late = try ListenerClient(port: server.port)
            let (lateBytes, lateClosed) = late.read(for: 1)
            late.close()
            served = !lateClosed && (try? LiveCapture(lateBytes))?.headerOK == true
        }
        #expect(served, "no listener served after the descriptors came back")
        let (bytes, closed) = existing.finish()
        let listened = Date().timeIntervalSince(connected)
        #expect(!closed, "the existing listener was disconnected")
        let capture = try LiveCapture(bytes)
        #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
        // Served all along: real time, plus what burst the ring had when it joined (nothing when the station had just
        // started, as here when this test runs alone), less one flush interval (0.3 s), one page (0.1 s) and the
        // reads' own lag. A loop that stopped writing while out of descriptors would leave seconds out.
        let audio = Double(capture.left.count) / 48_000
        #expect(audio > listened - 0.5, "\(audio) s of audio in \(listened) s")
    }
}
