import CLinux
import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: one real peer at a time.
extension PeerTests {
    /// Behind a real HAProxy (Debian's `haproxy`), as `deploy/haproxy.cfg` sets it up: TCP mode, `send-proxy-v2`,
    /// health checks against the status address's `/health`. Listeners connect through HAProxy from distinct loopback
    /// addresses (Linux routes all of 127/8 to lo), and the station must tell them apart by the header's source.
    @Suite(.timeLimit(.minutes(1))) struct HAProxyTests {
        /// A running `haproxy -db` with its config and stats socket in a fresh directory; stopped by its PID.
        final class HAProxy: @unchecked Sendable {
            let process = Process()
            let directory = temporaryPath("haproxy")
            var socketPath: String { directory + "/stats.sock" }
            var logPath: String { directory + "/haproxy.log" }

            /// Starts HAProxy with `config` (`STATS` in it stands for the stats socket's path).
            init(config: String) throws {
                let executable = try #require(tool("haproxy"))
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                let path = directory + "/haproxy.cfg"
                try config.replacingOccurrences(of: "STATS", with: socketPath).write(
                    toFile: path, atomically: false, encoding: .utf8)
                try #require(FileManager.default.createFile(atPath: logPath, contents: nil))
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = ["-db", "-f", path]
                process.standardInput = FileHandle.nullDevice
                process.standardOutput = FileHandle.nullDevice
                process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
                try process.run()
            }

            var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

            /// One command on the stats socket (`show stat`), its whole answer; empty when the socket is not there yet.
            func command(_ text: String) -> String {
                let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                guard fd >= 0 else { return "" }
                defer { close(fd) }
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socketPath.utf8.prefix(107))) }
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
                guard connected == 0 else { return "" }
                let request = Array((text + "\n").utf8)
                _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                var answer: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 8192)
                var timeout = timeval(tv_sec: 2, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { break }
                    answer += buffer[..<count]
                }
                return String(decoding: answer, as: UTF8.self)
            }

            /// Each server of `backend` with its `status` and `check_status` (from `show stat`'s CSV).
            func servers(of backend: String) -> [String: (status: String, check: String)] {
                let lines = command("show stat").split(separator: "\n").map(String.init)
                guard let header = lines.first, header.hasPrefix("# ") else { return [:] }
                let columns = header.dropFirst(2).split(separator: ",", omittingEmptySubsequences: false).map(
                    String.init)
                guard let status = columns.firstIndex(of: "status"), let check = columns.firstIndex(of: "check_status")
                else { return [:] }
                var result: [String: (status: String, check: String)] = [:]
                for line in lines.dropFirst() {
                    let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                    guard fields.count > max(status, check), fields[0] == backend, fields[1] != "BACKEND" else {
                        continue
                    }
                    result[fields[1]] = (fields[status], fields[check])
                }
                return result
            }

            func stop() {
                if process.isRunning { kill(process.processIdentifier, SIGTERM) }
                process.waitUntilExit()
                try? FileManager.default.removeItem(atPath: directory)
            }
        }

        @Test(.enabled(if: tool("haproxy") != nil))
        func listenersThroughHAProxyKeepTheirAddressesAndHealthChecksPass() throws {
            let station = try ServedStation(["--proxy-protocol", "yes", "--max-per-ip", "1"])
            defer { station.stop() }
            let front = try freePort()
            let nowhere = try freePort()  // edge2: nothing listens, its checks fail
            // deploy/haproxy.cfg's choices, with faster checks and short timeouts for the test.
            let haproxy = try HAProxy(
                config: """
                    global
                        stats socket STATS mode 600 level admin
                    defaults
                        mode tcp
                        timeout connect 1s
                        timeout client 1m
                        timeout server 1m
                        option redispatch
                        retries 2
                    frontend listeners
                        bind 127.0.0.1:\(front)
                        default_backend edges
                    backend edges
                        balance leastconn
                        option httpchk GET /health
                        http-check expect status 200
                        default-server inter 200ms fall 2 rise 2
                        server edge1 127.0.0.1:\(station.port) send-proxy-v2 check port \(station.status)
                        server edge2 127.0.0.1:\(nowhere) send-proxy-v2 check port \(nowhere)

                    """)
            defer { haproxy.stop() }

            // The health checks: edge1's /health answers 200 (L7OK), edge2 is down.
            let deadline = Date().addingTimeInterval(8)
            var servers = haproxy.servers(of: "edges")
            while Date() < deadline
                && !(servers["edge1"]?.check == "L7OK" && servers["edge2"]?.status.hasPrefix("DOWN") == true)
            {
                usleep(100_000)
                servers = haproxy.servers(of: "edges")
            }
            #expect(servers["edge1"]?.status == "UP" && servers["edge1"]?.check == "L7OK", "\(servers)\n\(haproxy.log)")
            #expect(servers["edge2"]?.status.hasPrefix("DOWN") == true, "\(servers)")

            // A listener from 127.0.0.5 through HAProxy gets the stream.
            let first = try ListenerClient(port: front, source: "127.0.0.5")
            defer { first.close() }
            let (bytes, closed) = first.read(for: 1.5)
            #expect(!closed)
            let capture = try LiveCapture(bytes)
            #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            #expect(capture.left.count > 48_000 * 2)
            #expect(abs(capture.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.05)
            #expect(abs(capture.medianAmplitude(left: false, frequency: 1000) - 0.475) < 0.05)
            // The station saw 127.0.0.5, not HAProxy's 127.0.0.1: a second listener from there is over its limit of 1,
            // one from 127.0.0.6 is served.
            let second = try ListenerClient(port: front, source: "127.0.0.5")
            defer { second.close() }
            let refused = second.read(for: 2)
            #expect(refused.closed && refused.bytes.isEmpty)
            let third = try ListenerClient(port: front, source: "127.0.0.6")
            defer { third.close() }
            let served = third.read(for: 0.5)
            let servedCapture = try LiveCapture(served.bytes)
            #expect(!served.closed && servedCapture.headerOK)
            let counters = try station.station()
            #expect(
                counters.connections == 3 && counters.refusals == 1 && counters.listeners == 2, "\(counters)")
            #expect(counters.proxyRejected == 0)
        }

        /// The shipped example passes HAProxy's own check.
        @Test(.enabled(if: tool("haproxy") != nil))
        func theDeployedConfigIsValid() throws {
            let path = Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("deploy/haproxy.cfg").path
            let check = try run(try #require(tool("haproxy")), ["-c", "-f", path])
            #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        }
    }
}
