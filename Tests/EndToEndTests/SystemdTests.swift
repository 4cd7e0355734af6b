import CLinux
import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: one test at a time next to the other lane.
extension PeerTests {
    /// The real binary under systemd's own tools: `systemd-socket-activate` binds the ports, starts the binary at the
    /// first connection and passes the sockets; the notify protocol arrives at a datagram socket of the test's.
    @Suite(
        .timeLimit(.minutes(1)), .serialized,
        .enabled(if: tool("systemd-socket-activate") != nil, "needs systemd-socket-activate (systemd)"))
    struct SystemdTests {
        /// A datagram socket that collects sd_notify messages.
        final class NotifySocket {
            let path = temporaryPath("notify.sock")
            let fd: Int32

            init() throws {
                fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                try #require(fd >= 0)
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                withUnsafeMutableBytes(of: &address.sun_path) { raw in
                    for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
                }
                let bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
                try #require(bound == 0, "bind \(path): \(errno)")
                var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            }

            deinit {
                close(fd)
                unlink(path)
            }

            /// Messages received until `until` holds for the list so far, or `seconds` pass.
            func messages(for seconds: Double, until done: ([String]) -> Bool = { _ in false }) -> [String] {
                var received: [String] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                let deadline = Date().addingTimeInterval(seconds)
                while Date() < deadline && !done(received) {
                    let n = recv(fd, &buffer, buffer.count, 0)
                    if n > 0 { received.append(String(decoding: buffer[0..<n], as: UTF8.self)) }
                }
                return received
            }
        }

        static func start(_ arguments: [String], ports: [UInt16], notify: NotifySocket) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try #require(tool("systemd-socket-activate")))
            let executable = try #require(radioRelayExecutable())
            process.arguments =
                ports.flatMap { ["-l", "127.0.0.1:\($0)"] } + [
                    "-E", "NOTIFY_SOCKET=\(notify.path)", "-E", "WATCHDOG_USEC=1000000", executable,
                ] + arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }

        /// Connects (retrying while systemd-socket-activate is still binding) and returns what arrives in `seconds`.
        static func listen(port: UInt16, seconds: Double) throws -> [UInt8] {
            let deadline = Date().addingTimeInterval(5)
            while true {
                if let client = try? ListenerClient(port: port) {
                    defer { client.close() }
                    return client.read(for: seconds).bytes
                }
                guard Date() < deadline else { throw POSIXError(.ECONNREFUSED) }
                usleep(50_000)
            }
        }

        @Test func theDemoServesTheSocketItWasPassedAndTalksToSystemd() throws {
            let notify = try NotifySocket()
            let port = try freePort()
            let process = try Self.start([], ports: [port], notify: notify)
            defer {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
            }
            // The binary starts at this first connection, takes the socket and serves it.
            let bytes = try Self.listen(port: port, seconds: 2)
            let capture = try LiveCapture(bytes)
            #expect(capture.headerOK && Double(capture.left.count) / 48_000 > 1)
            var messages = notify.messages(for: 3) { list in list.filter { $0.contains("WATCHDOG=1") }.count >= 2 }
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            messages += notify.messages(for: 1) { $0.contains { $0.contains("STOPPING=1") } }
            let ready = try #require(messages.firstIndex { $0.contains("READY=1") }, "\(messages)")
            #expect(messages[ready].contains("STATUS=") && messages[ready].contains("; main: "), "\(messages)")
            let watchdog = try #require(messages.firstIndex { $0.contains("WATCHDOG=1") }, "\(messages)")
            let stopping = try #require(messages.firstIndex { $0.contains("STOPPING=1") }, "\(messages)")
            #expect(ready < watchdog && watchdog < stopping)
        }

        @Test func twoPassedSocketsGoToTheTwoStationsOfTheConfig() throws {
            let notify = try NotifySocket()
            let first = try freePort()
            let second = try freePort()
            let fixture = Fixture.path("stereo-44k-128k.mp3")
            let config = temporaryPath("two.conf")
            try """
            [server]
            status = off

            [station one]
            upstream = \(fixture)
            bind = 127.0.0.1
            port = \(first)

            [station two]
            upstream = \(Fixture.path("mono-48k.mp3"))
            bind = 127.0.0.1
            port = \(second)
            """.write(toFile: config, atomically: true, encoding: .utf8)
            defer { unlink(config) }
            let process = try Self.start(["--config", config], ports: [first, second], notify: notify)
            defer {
                if process.isRunning { kill(process.processIdentifier, SIGTERM) }
                process.waitUntilExit()
            }
            let one = try LiveCapture(try Self.listen(port: first, seconds: 1.5))
            let two = try LiveCapture(try Self.listen(port: second, seconds: 1.5))
            #expect(one.headerOK && two.headerOK)
            // Different stations: different streams (their own serials, their own audio).
            #expect(one.pages.first?.header.serial != two.pages.first?.header.serial)
            let messages = notify.messages(for: 2) { $0.contains { $0.contains("READY=1") } }
            let ready = try #require(messages.first { $0.contains("READY=1") }, "\(messages)")
            #expect(ready.contains("one: ") && ready.contains("two: "), "\(ready)")
        }

        /// The whole notify conversation in order — READY, STATUS, WATCHDOG, RELOADING (SIGHUP), READY, STOPPING
        /// (SIGTERM) — and a pipeline hung through the test hook (`RADIO_RELAY_TEST_HANG_PIPELINE`) stops the watchdog
        /// pings within the allowance (half the watchdog interval).
        @Test func theNotifyConversationAndAHungPipelineStopsTheWatchdog() throws {
            let notify = try NotifySocket()
            let port = try freePort()
            let config = temporaryPath("one.conf")
            try
                "[server]\nstatus = off\n[station one]\nupstream = \(Fixture.path("stereo-44k-128k.mp3"))\nport = \(port)\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            defer { unlink(config) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try #require(tool("systemd-socket-activate")))
            process.arguments = [
                "-l", "127.0.0.1:\(port)", "-E", "NOTIFY_SOCKET=\(notify.path)", "-E", "WATCHDOG_USEC=4000000",
                "-E", "RADIO_RELAY_TEST_HANG_PIPELINE=one:5", try #require(radioRelayExecutable()), "--config", config,
            ]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
            }
            let started = Date()
            #expect(try LiveCapture(try Self.listen(port: port, seconds: 1)).headerOK)
            var log: [(at: Double, message: String)] = []
            func collect(_ seconds: Double) {
                let deadline = Date().addingTimeInterval(seconds)
                while Date() < deadline {
                    for message in notify.messages(for: 0.2) {
                        log.append((Date().timeIntervalSince(started), message))
                    }
                }
            }
            collect(2)
            if process.isRunning { kill(process.processIdentifier, SIGHUP) }
            collect(9)  // the pipeline hangs at 5 s; pings stop 2 s later
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            process.waitUntilExit()
            collect(0.5)
            func first(_ text: String, after index: Int = -1) -> Int? {
                log.indices.first { $0 > index && log[$0].message.contains(text) }
            }
            let ready = try #require(first("READY=1"), "\(log)")
            #expect(log[ready].message.contains("/1 stations up, "), "\(log[ready].message)")
            let watchdog = try #require(first("WATCHDOG=1", after: ready), "\(log)")
            let reloading = try #require(first("RELOADING=1", after: watchdog), "\(log)")
            let readyAgain = try #require(first("READY=1", after: reloading), "\(log)")
            let stopping = try #require(first("STOPPING=1", after: readyAgain), "\(log)")
            #expect(stopping == log.count - 1)
            let pings = log.filter { $0.message.contains("WATCHDOG=1") }.map(\.at)
            let lastPing = try #require(pings.last)
            print("watchdog: \(pings.count) pings, the last \(lastPing) s after start; the pipeline hung at about 5 s")
            #expect(lastPing > 4.5 && lastPing < 8.5, "pings at \(pings)")
            #expect(!pings.contains { $0 > 8.5 }, "pings went on after the pipeline hung: \(pings)")
        }
    }
}
