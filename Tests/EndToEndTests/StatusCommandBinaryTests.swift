import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

@testable import RadioRelaySystem

extension ServerProcessTests {
    /// `radio-relay status` against running relays, as a monitoring system runs it: the table and exit 0 for a
    /// healthy one, 1 for one whose upstream is retrying, 2 for an endpoint nobody answers, 3 for a usage error; the
    /// JSON passed through with `--json`; a token from `--token-file`.
    @Suite(.timeLimit(.minutes(1))) struct StatusCommandBinaryTests {
        static func status(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try run(
                try #require(radioRelayExecutable(), "no radio-relay binary: set RADIO_RELAY_BINARY"),
                ["status"] + arguments)
        }

        @Test func exitStatusesForHealthyRetryingAndUnreachable() throws {
            let healthy = try ServedStation()
            defer { healthy.stop() }
            let retrying = try ServedStation(upstream: "http://127.0.0.1:1/gone.mp3")
            defer { retrying.stop() }
            try #require(waitUntil(10) { (try? healthy.station())?.upstream == .connected })
            try #require(waitUntil(10) { (try? retrying.station())?.upstream.phase == .retrying })

            let ok = try Self.status(["--url", "http://127.0.0.1:\(healthy.status)"])
            print("$ radio-relay status (healthy) → \(ok.status)\n\(ok.stdout)")
            #expect(ok.status == 0 && ok.stdout.hasPrefix("radio-relay OK: 1 station"), "\(ok)")
            #expect(ok.stdout.contains("\ntest     ok     1      0/0/0"), "\(ok.stdout)")
            let warning = try Self.status(["--url", "127.0.0.1:\(retrying.status)"])
            print("$ radio-relay status (retrying) → \(warning.status)\n\(warning.stdout)")
            #expect(warning.status == 1 && warning.stdout.hasPrefix("radio-relay WARNING:"), "\(warning)")
            #expect(warning.stdout.contains("test is retrying its input"), "\(warning.stdout)")
            let unreachable = try Self.status(["--url", "127.0.0.1:\(try freePort())"])
            print("$ radio-relay status (nobody listens) → \(unreachable.status)\n\(unreachable.stdout)")
            #expect(unreachable.status == 2 && unreachable.stdout.hasPrefix("radio-relay CRITICAL: cannot read"))
            let usage = try Self.status(["--frob"])
            #expect(usage.status == 3 && usage.stderr.contains("unknown option --frob"), "\(usage)")
            let json = try Self.status(["--url", "127.0.0.1:\(healthy.status)", "--json"])
            #expect(json.status == 0)
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect((object?["stations"] as? [[String: Any]])?.first?["name"] as? String == "test")
        }

        /// The binary against a hostile server (a test server answering what a broken or malicious status endpoint
        /// could): an overflowing count, terminal escapes and a forged plugin line in its strings, a byte a second.
        @Test func aHostileServer() throws {
            // The server's own schema with hostile values: what a broken or malicious server can send that decodes.
            var evil = StationStatus(name: "evil\u{1B}]0;owned\u{07}\nradio-relay OK | load=0")
            evil.playingInput = "1"
            evil.title = "\u{9B}2J"
            var full = OutputStatus(rendition: "main")
            full.listeners = Int.max
            full.httpListeners = -1
            evil.outputs = [full]
            evil.inputs = [
                InputState(
                    name: "1", kind: .http, url: "", state: .playing, reason: nil, since: 0, connected: true,
                    title: nil,
                    bytesIn: 0, reconnects: 0)
            ]
            var other = evil
            other.name = "b"
            other.title = nil
            let forged = try JSONEncoder().encode(StatusSnapshot(stations: [evil, other]))
            let hostile = try HTTPTestServer { _ in
                .init(headers: ["Content-Type": "application/json"], body: Array(forged))
            }
            defer { hostile.stop() }
            // Another shape altogether (an older or a foreign server): refused, saying which key, with its text made
            // printable too.
            let foreign = #"{"stations":[{"name":"evil\u001b]0;owned\u0007","alive":true}]}"#
            let foreignServer = try HTTPTestServer { _ in
                .init(headers: ["Content-Type": "application/json"], body: Array(foreign.utf8))
            }
            defer { foreignServer.stop() }
            let dripping = try HTTPTestServer { _ in
                .init(body: Array(repeating: UInt8(ascii: " "), count: 100), pace: 1)
            }
            defer { dripping.stop() }
            let started = monotonicNow()
            let answer = try Self.status(["--url", "127.0.0.1:\(hostile.port)"])
            print(
                "$ radio-relay status (hostile JSON) → \(answer.status) in \(monotonicNow() - started) s\n\(answer.stdout)"
            )
            #expect(answer.status == 0, "no trap on the overflow: \(answer)")
            #expect(answer.stdout.hasPrefix("radio-relay OK: 2 stations, 9223372036854775807 listeners"), "\(answer)")
            #expect(
                !answer.stdout.unicodeScalars.contains {
                    $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value)
                })
            #expect(answer.stdout.split(separator: "\n").count == 4 && !answer.stdout.contains("|"), "\(answer.stdout)")
            let refused = try Self.status(["--url", "127.0.0.1:\(foreignServer.port)"])
            #expect(refused.status == 2, "\(refused)")
            #expect(
                refused.stdout.contains("is not the status JSON of this version (no version)"), "\(refused.stdout)")
            #expect(!refused.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
            // The drip: one overall deadline.
            let dripStarted = monotonicNow()
            let drip = try Self.status(["--url", "http://127.0.0.1:\(dripping.port)"])
            let took = monotonicNow() - dripStarted
            print("$ radio-relay status (a byte a second) → \(drip.status) in \(took) s: \(drip.stdout)")
            #expect(drip.status == 2 && drip.stdout.contains("no complete answer within 5 s"), "\(drip)")
            #expect(took < 7, "\(took) s")
        }

        @Test func aTokenFromAFile() throws {
            let token = "0123456789abcdef-token"
            let config = temporaryPath("status.conf")
            let (status, port) = (try freePort(), try freePort())
            try
                "[server]\nstatus = 127.0.0.1:\(status)\nstatus_token = \(token)\n[station main]\nbind = 127.0.0.1\nport = \(port)\nupstream = \(Fixture.path("stereo-44k-128k.mp3"))\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let server = try ServerProcess(arguments: ["serve", "--config", config])
            defer { server.stop() }
            let tokenFile = temporaryPath("token")
            try "\(token)\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: tokenFile) }
            // The address from the config file; no token: 401, CRITICAL.
            let refused = try Self.status(["--config", config])
            #expect(refused.status == 2 && refused.stdout.contains("answered 401"), "\(refused)")
            let allowed = try Self.status(["--config", config, "--token-file", tokenFile])
            #expect(allowed.status == 0, "\(allowed)")
        }
    }
}
