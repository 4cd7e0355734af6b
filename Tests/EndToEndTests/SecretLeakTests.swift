import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// The real binary with a planted password and token in its upstream and push URLs, failing, retrying, reloading and
/// pushing: none of what it says anywhere (its log, `/status.json`, `/metrics`, `check-config`, a usage error) holds
/// either secret.
extension ServerProcessTests {
    @Suite(.timeLimit(.minutes(1)), .serialized) struct SecretLeakTests {
        static let password = "S3cretPW"
        static let token = "T0ken"

        static func config(
            upstreamPort: UInt16, pushPort: UInt16, status: UInt16, port: UInt16, bitrate: String, http: UInt16
        ) -> String {
            """
            [server]
            status = 127.0.0.1:\(status)
            http = 127.0.0.1:\(http)

            [station leaky]
            upstream = http://dj:\(password)@127.0.0.1:\(upstreamPort)/live.mp3?token=\(token)&format=mp3
            bind = 127.0.0.1
            port = \(port)
            bitrate = \(bitrate)
            reconnect_max = 1
            push = icecast://source:\(password)@127.0.0.1:\(pushPort)/leaky.opus
            push = icecasts://source:\(password)@127.0.0.1:\(pushPort)/leaky-tls.opus

            [dj leaky-dj]
            password = \(password)\(bitrate)
            stations = leaky

            """
        }

        static func leaks(_ text: String) -> Bool { text.contains(password) || text.contains(token) }

        @Test func noSecretInAnythingTheServerSays() throws {
            // Nothing listens on the upstream's or the push's port: both fail and retry.
            let ports = try (0..<5).map { _ in try freePort() }
            let path = temporaryPath("secrets.conf")
            defer { unlink(path) }
            try Self.config(
                upstreamPort: ports[0], pushPort: ports[1], status: ports[2], port: ports[3], bitrate: "96k",
                http: ports[4]
            )
            .write(toFile: path, atomically: true, encoding: .utf8)
            let server = try ServerProcessTests.ServerProcess(arguments: ["--config", path])
            defer { server.stop() }
            // Two upstream retries and a failed push, then a reload that changes the bitrate.
            try ServerProcessTests.ReloadTests.waitFor("retrying", in: server, count: 3)
            try ServerProcessTests.ReloadTests.waitFor("push to", in: server)
            try Self.config(
                upstreamPort: ports[0], pushPort: ports[1], status: ports[2], port: ports[3], bitrate: "64k",
                http: ports[4]
            )
            .write(toFile: path, atomically: true, encoding: .utf8)
            server.signal(SIGHUP)
            try ServerProcessTests.ReloadTests.waitFor("reload: updated leaky", in: server)
            #expect(server.logged("reload: DJ accounts: changed leaky-dj (password) (in place)"), "\(server.log)")
            let status = try httpGet(ports[2], "/status.json")
            let metrics = try httpGet(ports[2], "/metrics")
            #expect(status.status == 200 && metrics.status == 200)
            let json = String(decoding: status.body, as: UTF8.self)
            #expect(json.contains("upstream_reason") && json.contains("***"), "\(json)")
            let outputs = [
                ("the log", server.log), ("/status.json", json),
                ("/metrics", String(decoding: metrics.body, as: UTF8.self)),
            ]
            for (name, text) in outputs { #expect(!Self.leaks(text), "\(name) holds a secret:\n\(text)") }
            #expect(
                server.log.contains("http://***@127.0.0.1:\(ports[0])/live.mp3?token=***&format=***"), "\(server.log)")
        }

        @Test func noSecretInCheckConfigOrUsageErrors() throws {
            let executable = try #require(radioRelayExecutable())
            let path = temporaryPath("secrets-bad.conf")
            defer { unlink(path) }
            try """
            [station leaky]
            upstream = ftp://dj:\(Self.password)@127.0.0.1/live.mp3?token=\(Self.token)
            push = icecast://source:\(Self.password)@127.0.0.1
            push = icecasts://source:\(Self.password)@127.0.0.1
            port = 0
            [dj leaky-dj]
            password = \(Self.password) \(Self.token)
            stations = leaky

            """.write(toFile: path, atomically: true, encoding: .utf8)
            let check = try run(executable, ["check-config", path])
            #expect(check.status == 78)
            #expect(check.stderr.contains("ftp://***@127.0.0.1/live.mp3?token=***"), "\(check.stderr)")
            #expect(check.stderr.contains("password = ***: use 8 to 256"), "\(check.stderr)")
            #expect(!Self.leaks(check.stdout + check.stderr), "\(check.stdout)\(check.stderr)")
            let usage = try run(
                executable, ["serve", "--push", "icecast://source:\(Self.password)@h?token=\(Self.token)"])
            #expect(usage.status == 64)
            #expect(!Self.leaks(usage.stdout + usage.stderr), "\(usage.stderr)")
        }
    }
}
