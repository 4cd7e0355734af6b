import Foundation
import Glibc
import RadioRelay
import RadioRelaySystem
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: the binary with a backend process, and listeners that are plain sockets (each
/// leaves exactly when and how the test says).
extension ServerProcessTests {
    /// A protected station's listeners leave every way a listener leaves, each producing exactly one
    /// `listener_remove` with a plausible duration and its reason; and a backend that is down, hangs or answers
    /// garbage gets `auth_failure`'s answer within `auth_timeout`, also for a thousand listeners at once, while the
    /// page and `/health` stay answered.
    @Suite(.enabled(if: tool("python3") != nil, "needs python3 (.ci/deps --test)"))
    struct URLAuthLifecycleTests {
        /// `[server]` with the HTTP address and the status endpoint, and one station per `(name, extra keys)`.
        static func config(http: UInt16, status: UInt16, _ stations: [(String, String)]) throws -> String {
            var text = "[server]\nhttp = 127.0.0.1:\(http)\nstatus = 127.0.0.1:\(status)\n"
            for (name, extra) in stations {
                text += "\n[station \(name)]\nupstream = \(Fixture.path("stereo-44k-128k.mp3"))\nbind = 127.0.0.1\n"
                // Protected: no raw TCP port.
                text += "port = none\n\(extra)\n"
            }
            return text
        }

        /// The binary serving `stations` from a config file (rewritten by `write` for a reload), with the HTTP
        /// address and the status endpoint on free ports.
        final class Served {
            let path: String
            let http: UInt16
            let status: UInt16
            private(set) var server: ServerProcess!

            init(_ name: String, _ stations: [(String, String)]) throws {
                path = temporaryPath(name + ".conf")
                (http, status) = (try freePort(), try freePort())
                try write(stations)
                server = try ServerProcess(arguments: ["--config", path])
            }

            func write(_ stations: [(String, String)]) throws {
                try URLAuthLifecycleTests.config(http: http, status: status, stations).write(
                    toFile: path, atomically: true, encoding: .utf8)
            }

            func stop() {
                server.stop()
                unlink(path)
            }
        }

        static let alice = "Authorization: Basic " + Data("alice:s3cret".utf8).base64EncodedString() + "\r\n"

        /// A listener that asked for `path` with `headers`, and the head of its answer.
        static func listen(
            _ port: UInt16, _ path: String, headers: String = alice, receiveBuffer: Int32? = nil
        ) throws -> (client: ListenerClient, head: String) {
            let client = try ListenerClient(port: port, receiveBuffer: receiveBuffer)
            client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: lifecycle-test\r\n\(headers)\r\n")
            var bytes: [UInt8] = []
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline,
                !bytes.starts(with: Array("HTTP/".utf8)) || !String(decoding: bytes, as: UTF8.self).contains("\r\n\r\n")
            {
                let (chunk, closed) = client.read(for: 0.1, limit: 512)
                bytes += chunk
                if closed { break }
            }
            // The status line: up to the first CR, by bytes ("\r\n" is one Character).
            return (client, String(decoding: bytes.prefix { $0 != 0x0D }, as: UTF8.self))
        }

        @Test(.timeLimit(.minutes(2))) func everyWayOutSendsExactlyOneRemove() throws {
            let backend = try AuthBackend()
            defer { backend.stop() }
            let keys =
                "listener_add = \(backend.url("/auth"))\nlistener_remove = \(backend.url("/remove"))\nmax_lag = 1\n"
            // A second station ends its listeners' streams after two seconds (`max_listener_duration`).
            let short = ("short", keys + "max_listener_duration = 2\n")
            let served = try Served("auth-lifecycle", [("test", keys), short])
            defer { served.stop() }
            let (server, http) = (served.server!, served.http)
            let started = Date()
            // It closes after a second and a half of listening.
            let closing = try Self.listen(http, "/test.opus?who=closes")
            #expect(closing.head == "HTTP/1.1 200 OK")
            _ = closing.client.read(for: 1.5)
            closing.client.close()
            let sessionLimited = try Self.listen(http, "/short.opus?who=short")
            #expect(sessionLimited.head == "HTTP/1.1 200 OK")
            // The backend's time limit: two seconds.
            let limited = try Self.listen(http, "/test.opus?token=good&limit=2&who=limited", headers: "")
            #expect(limited.head == "HTTP/1.1 200 OK")
            var limitedClosed = false
            let limitDeadline = Date().addingTimeInterval(10)
            while !limitedClosed && Date() < limitDeadline { limitedClosed = limited.client.read(for: 0.5).closed }
            #expect(limitedClosed)
            // It stops reading: moved to the live edge, then dropped as too slow.
            let slow = try Self.listen(http, "/test.opus?who=slow", receiveBuffer: 4096)
            #expect(slow.head == "HTTP/1.1 200 OK")
            // Two that stay: one until its station restarts on a reload, one until the server stops.
            let restarted = try Self.listen(http, "/test.opus?who=restarted")
            let stopped = try Self.listen(http, "/test.opus?who=stopped")
            func removes(_ who: String) -> [AuthBackend.Call] {
                backend.calls("listener_remove").filter {
                    ($0["mount"] ?? "").contains("who=\(who)&") || ($0["mount"] ?? "").hasSuffix("who=\(who)")
                }
            }
            #expect(waitUntil(30) { !removes("slow").isEmpty }, "\(server.log)")
            // The station restarts: page_ms is a restart key.
            try served.write([("test", keys + "page_ms = 60\n"), short])
            server.signal(SIGHUP)
            #expect(waitUntil(15) { !removes("restarted").isEmpty }, "\(server.log)")
            server.signal(SIGTERM)
            let stopTook = server.waitForExit()
            // Sent before the process ended.
            #expect(removes("stopped").count == 1, "\(backend.calls.map(\.fields))")
            for client in [limited.client, slow.client, restarted.client, stopped.client, sessionLimited.client] {
                client.close()
            }

            let expected: [(who: String, reason: String, seconds: ClosedRange<Int>)] = [
                ("closes", "left", 1...2), ("limited", "time_limit", 2...2), ("short", "session_limit", 2...2),
                ("slow", "too_slow", 1...30),
                ("restarted", "stopped", 1...60), ("stopped", "stopped", 1...60),
            ]
            for (who, reason, seconds) in expected {
                let sent = removes(who)
                try #require(sent.count == 1, "\(who): \(sent.map(\.fields))")
                let remove = sent[0]
                print("\(who): listener_remove reason=\(remove["reason"] ?? "-") duration=\(remove["duration"] ?? "-")")
                #expect(remove["reason"] == reason, "\(who): \(remove.fields)")
                let duration = Int(remove["duration"] ?? "") ?? -1
                #expect(seconds.contains(duration), "\(who): \(duration) s")
                #expect(Double(duration) <= Date().timeIntervalSince(started) + 1, "\(who): \(duration) s")
                // The same listener as its add: its ID, mount, user and address.
                let add = backend.calls("listener_add").first { $0["client"] == remove["client"] }
                #expect(add?["mount"] == remove["mount"] && add?["user"] == remove["user"] && add?["ip"] == "127.0.0.1")
            }
            #expect(stopTook < 5, "exited \(stopTook) s after SIGTERM")
            // Exactly one remove for every admitted listener, none for anyone else.
            let admittedIDs = backend.calls("listener_add").compactMap { $0["client"] }
            let removedIDs = backend.calls("listener_remove").compactMap { $0["client"] }
            #expect(
                admittedIDs.count == 6 && removedIDs.sorted() == admittedIDs.sorted(), "\(admittedIDs) \(removedIDs)")
            #expect(server.logged("time limit (2 s, icecast-auth-timelimit)"), "\(server.log)")
        }

        /// A backend that is down, one that hangs 30 s, one that answers garbage: refused (503) within the timeout,
        /// or admitted with `auth_failure = admit`; a raw TCP listener of a protected station is closed.
        @Test(.timeLimit(.minutes(2))) func aFailingBackendIsAnsweredWithinTheTimeout() throws {
            let backend = try AuthBackend()
            defer { backend.stop() }
            let downPort = try freePort()  // nothing listens there
            let stations = [
                ("down", "listener_add = http://127.0.0.1:\(downPort)/auth\nauth_timeout = 2\n"),
                ("hang", "listener_add = \(backend.url("/hang"))\nauth_timeout = 2\n"),
                ("garbage", "listener_add = \(backend.url("/garbage"))\nauth_timeout = 2\n"),
                ("open", "listener_add = \(backend.url("/hang"))\nauth_timeout = 2\nauth_failure = admit\n"),
            ]
            let served = try Served("auth-failing", stations)
            defer { served.stop() }
            let (server, http) = (served.server!, served.http)
            for (name, expected, within) in [
                ("down", "HTTP/1.1 503", 1.0), ("hang", "HTTP/1.1 503", 2.6), ("garbage", "HTTP/1.1 503", 1.0),
                ("open", "HTTP/1.1 200", 2.6),
            ] {
                let asked = Date()
                let (client, head) = try Self.listen(http, "/\(name).opus")
                let took = Date().timeIntervalSince(asked)
                client.close()
                #expect(head.hasPrefix(expected), "\(name): \(head)")
                #expect(took < within, "\(name): answered after \(took) s")
                print("\(name): \(head) after \(String(format: "%.2f", took)) s")
            }
            // The log is written on its own thread: the line may come a moment after the answer.
            #expect(
                waitUntil(5) { server.log.contains("admitted unchecked (auth_failure = admit)") }, "\(server.log)")
            // The backend that was down comes up: the next listener is asked again, and admitted.
            let recovered = try AuthBackend(port: downPort)
            defer { recovered.stop() }
            let (again, head) = try Self.listen(served.http, "/down.opus")
            again.close()
            #expect(head == "HTTP/1.1 200 OK", "\(head)")
            #expect(recovered.calls("listener_add").count == 1)
            // A raw TCP port on a protected station is a configuration error that says why.
            let open = try Self.config(http: served.http, status: served.status, [stations[0]])
                .replacingOccurrences(of: "port = none", with: "port = \(try freePort())")
            let path = temporaryPath("auth-raw.conf")
            defer { unlink(path) }
            try open.write(toFile: path, atomically: true, encoding: .utf8)
            let checked = try run(try #require(radioRelayExecutable()), ["check-config", path])
            #expect(checked.status != 0)
            #expect(
                (checked.stdout + checked.stderr).contains(
                    "station down: protected (listener_add), and raw TCP carries no credentials: set port = none"),
                "\(checked.stdout)\(checked.stderr)")
        }

        /// A thousand listeners at once (from 16 addresses), a backend that takes a second for each: at most 64
        /// calls at once, so about 64 a second are admitted and the rest are refused (503) at the timeout — everyone
        /// answered within it, none waiting after; the page and `/health` answered all along; one remove for each
        /// admitted listener.
        @Test(.timeLimit(.minutes(2))) func aThousandListenersAtOnceWithASlowBackend() throws {
            let backend = try AuthBackend()
            defer { backend.stop() }
            let keys =
                "listener_add = \(backend.url("/slow"))\nlistener_remove = \(backend.url("/remove"))\nauth_timeout = 5\n"
            let served = try Served("auth-storm", [("test", keys)])
            defer { served.stop() }
            let (http, status) = (served.http, served.status)
            // The page and /health, asked every 100 ms during the storm, each answer timed.
            let probing = ManagedFlag()
            let probes = Background { () -> [Double] in
                var worst: [Double] = []
                while !probing.isSet {
                    let asked = Date()
                    let health = try? httpGet(status, "/health")
                    let page = try? httpGet(http, "/")
                    worst.append(
                        health?.status == 200 && page?.status == 200 ? Date().timeIntervalSince(asked) : .infinity)
                    usleep(100_000)
                }
                return worst
            }
            let request = "GET /test.opus HTTP/1.1\r\nHost: 127.0.0.1\r\n\(Self.alice)\r\n"
            let answers = Storm.run(port: http, count: 1000, sources: 16, request: request, deadline: 15)
            probing.set()
            let probeTimes = try probes.value()
            let admitted = answers.filter { $0.status == 200 }
            let refused = answers.filter { $0.status == 503 }
            let slowest = answers.map(\.seconds).max() ?? .infinity
            print(
                "1000 at once: \(admitted.count) admitted, \(refused.count) refused (503), "
                    + "\(answers.count - admitted.count - refused.count) other; slowest answer \(slowest) s; "
                    + "/health and / at worst \(probeTimes.max() ?? -1) s over \(probeTimes.count) probes")
            #expect(answers.count == 1000 && admitted.count + refused.count == 1000, "\(answers.map(\.status))")
            #expect(slowest < 5.0 + 1.0, "an answer took \(slowest) s")
            // 64 calls at once for about four seconds of the five, each a second long.
            #expect(admitted.count >= 150 && admitted.count <= 64 * 6, "\(admitted.count)")
            #expect(!probeTimes.isEmpty && (probeTimes.max() ?? .infinity) < 1.0, "\(probeTimes)")
            #expect(waitUntil(15) { backend.calls("listener_remove").count == admitted.count })
            let snapshot = try statusSnapshot(status)
            #expect(snapshot.authentication.waiting == 0 && snapshot.authentication.admitted == admitted.count)
            #expect(snapshot.authentication.failed == refused.count, "\(snapshot.authentication)")
            #expect(backend.calls("listener_remove").count == admitted.count)
        }

        /// An htpasswd file is read again on a reload: a user taken out is refused, one put in is admitted.
        @Test(.timeLimit(.minutes(1)), .enabled(if: tool("htpasswd") != nil, "needs apache2-utils"))
        func anHtpasswdFileIsReadAgainOnReload() throws {
            let file = temporaryPath("reload.htpasswd")
            defer { unlink(file) }
            func users(_ user: String) throws {
                let result = try run(try #require(tool("htpasswd")), ["-cbB", file, user, "pw-\(user)"])
                try #require(result.status == 0, "\(result.stderr)")
            }
            try users("bob")
            let served = try Served("auth-htpasswd", [("test", "htpasswd = \(file)\n")])
            defer { served.stop() }
            func answer(_ user: String) throws -> String {
                let basic = "Authorization: Basic " + Data("\(user):pw-\(user)".utf8).base64EncodedString() + "\r\n"
                let (client, head) = try Self.listen(served.http, "/test.opus", headers: basic)
                client.close()
                return head
            }
            #expect(try answer("bob") == "HTTP/1.1 200 OK")
            #expect(try answer("carol").hasPrefix("HTTP/1.1 401"))
            try users("carol")
            served.server.signal(SIGHUP)
            try ReloadTests.waitFor("reload: ", in: served.server)
            #expect(try answer("carol") == "HTTP/1.1 200 OK", "\(served.server.log)")
            #expect(try answer("bob").hasPrefix("HTTP/1.1 401"))
        }
    }
}
