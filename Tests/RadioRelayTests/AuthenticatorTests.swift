import Foundation
import Glibc
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelayNet
@testable import RadioRelaySystem

extension RealTimeTests {
    /// The authenticator against real backends on 127.0.0.1: answers read, a backend that hangs or is down answered
    /// within the timeout, the caps on waiting listeners, removes counted, and the stop's drain.
    @Suite struct AuthenticatorTests {
        /// Collects verdicts from the authenticator's thread.
        final class Verdicts: Sendable {
            private let box = LockedBox<[(Int, AuthVerdict, Double)]>([])
            func record(_ index: Int, _ verdict: AuthVerdict) {
                box.withLock { $0.append((index, verdict, monotonicNow())) }
            }
            var all: [(index: Int, verdict: AuthVerdict, at: Double)] { box.snapshot.map { ($0.0, $0.1, $0.2) } }
        }

        /// A backend that takes connections and never answers: a listening socket nobody accepts on.
        final class SilentBackend {
            let fd: Int32
            let port: UInt16
            init() {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                _ = SocketAddress(host: "127.0.0.1", port: 0)!.withSockaddr { bind(fd, $0, $1) }
                listen(fd, 128)
                port = SocketAddress(localOf: fd)!.port
                self.fd = fd
            }
            deinit { Glibc.close(fd) }
        }

        static func call(_ client: UInt64) -> AuthCall {
            AuthCall(
                action: .add, server: "127.0.0.1", port: 8000, client: ListenerID(client), mount: "/main.opus",
                credentials: ListenerCredentials(user: Array("alice".utf8), password: Array("pw".utf8)),
                ip: "127.0.0.1", agent: "test")
        }

        /// How many calls a backend received.
        final class Calls: Sendable {
            let count = Atomic<Int>(0)
        }

        /// A backend that answers every call 200, and counts them.
        static func countingBackend() throws -> (HTTPTestServer, Calls) {
            let calls = Calls()
            let backend = try HTTPTestServer { _ in
                calls.count.add(1, ordering: .relaxed)
                return HTTPTestServer.Response()
            }
            return (backend, calls)
        }

        static let host = HostKey(SocketAddress(host: "127.0.0.1", port: 1)!)

        @Test func answersAreRead() throws {
            let backend = try HTTPTestServer { path in
                switch path {
                case "/yes":
                    HTTPTestServer.Response(headers: ["icecast-auth-user": "1", "icecast-auth-timelimit": "60"])
                case "/no": HTTPTestServer.Response(status: 200, headers: ["icecast-auth-message": "not a member"])
                default: HTTPTestServer.Response(status: 500, body: Array("oops".utf8))
                }
            }
            defer { backend.stop() }
            let authenticator = Authenticator()
            try authenticator.start()
            defer { authenticator.stop(timeout: 5) }
            // No thread (and no libcurl) until the first call: a server without a protected station runs none.
            #expect(authenticator.heartbeats.isEmpty)
            let verdicts = Verdicts()
            for (index, path) in ["/yes", "/no", "/oops"].enumerated() {
                let refusal = authenticator.add(
                    Self.call(UInt64(index)), url: SecretURL(backend.baseURL + path), header: .icecast, timeout: 5,
                    from: Self.host
                ) { verdicts.record(index, $0) }
                #expect(refusal == nil)
            }
            #expect(waitUntil(10) { verdicts.all.count == 3 })
            #expect(authenticator.heartbeats.count == 1)
            let byIndex = Dictionary(uniqueKeysWithValues: verdicts.all.map { ($0.index, $0.verdict) })
            #expect(byIndex[0] == .admitted(timeLimit: 60))
            #expect(byIndex[1] == .refused(message: "not a member"))
            #expect(byIndex[2] == .failed("HTTP 500"))
            #expect(authenticator.counters.admitted.load(ordering: .relaxed) == 1)
            #expect(authenticator.counters.waiting.load(ordering: .relaxed) == 0)
        }

        /// A hanging backend and a closed port: `failed` by the deadline, whatever the backend does; the in-flight
        /// cap queues the rest, whose wait counts against the same deadline.
        @Test func aBackendThatHangsOrIsDownIsAnsweredWithinTheTimeout() throws {
            let silent = SilentBackend()
            let closed = SilentBackend()
            let closedPort = closed.port
            _ = consume closed  // its port now refuses connections
            var limits = Authenticator.Limits()
            limits.inFlight = 2
            let authenticator = Authenticator(limits: limits)
            try authenticator.start()
            defer { authenticator.stop(timeout: 5) }
            let verdicts = Verdicts()
            let asked = monotonicNow()
            for index in 0..<6 {
                let url = index == 5 ? "http://127.0.0.1:\(closedPort)/add" : "http://127.0.0.1:\(silent.port)/add"
                #expect(
                    authenticator.add(
                        Self.call(UInt64(index)), url: SecretURL(url), header: .icecast, timeout: 1, from: Self.host
                    ) {
                        verdicts.record(index, $0)
                    } == nil)
            }
            #expect(waitUntil(5) { verdicts.all.count == 6 })
            for (index, verdict, at) in verdicts.all {
                guard case .failed = verdict else {
                    Issue.record("\(index): \(verdict)")
                    continue
                }
                #expect(at - asked < 1.0 + 0.6, "\(index) answered after \(at - asked) s")
            }
            #expect(authenticator.counters.failed.load(ordering: .relaxed) == 6)
        }

        @Test func waitingListenersPerAddressAreCapped() throws {
            let silent = SilentBackend()
            var limits = Authenticator.Limits()
            limits.perAddress = 2
            let authenticator = Authenticator(limits: limits)
            try authenticator.start()
            defer { authenticator.stop(timeout: 5) }
            let verdicts = Verdicts()
            let url = SecretURL("http://127.0.0.1:\(silent.port)/add")
            let other = HostKey(SocketAddress(host: "127.0.0.2", port: 1)!)
            let answers = (0..<4).map { index in
                authenticator.add(
                    Self.call(UInt64(index)), url: url, header: .icecast, timeout: 0.5,
                    from: index == 3 ? other : Self.host
                ) {
                    verdicts.record(index, $0)
                }
            }
            #expect(answers[0] == nil && answers[1] == nil && answers[3] == nil)
            #expect(answers[2]?.contains("from this address") == true)
            #expect(authenticator.counters.overCap.load(ordering: .relaxed) == 1)
            #expect(waitUntil(5) { verdicts.all.count == 3 })
            // Their places are free again.
            #expect(
                authenticator.add(Self.call(9), url: url, header: .icecast, timeout: 0.5, from: Self.host) { _ in }
                    == nil)
        }

        /// Removes are sent and counted; after the stop they are counted as not sent.
        @Test func removesAreCountedAndTheStopDrainsThem() throws {
            let (backend, seen) = try Self.countingBackend()
            defer { backend.stop() }
            let authenticator = Authenticator()
            try authenticator.start()
            var remove = Self.call(1)
            remove.action = .remove(duration: 5, reason: .left)
            for _ in 0..<20 { authenticator.remove(remove, url: SecretURL(backend.baseURL + "/remove"), timeout: 2) }
            #expect(authenticator.stop(timeout: 5))
            #expect(authenticator.counters.removesSent.load(ordering: .relaxed) == 20)
            #expect(seen.count.load(ordering: .relaxed) == 20)
            authenticator.remove(remove, url: SecretURL(backend.baseURL + "/remove"), timeout: 2)
            #expect(authenticator.counters.removesUnsent.load(ordering: .relaxed) == 1)
        }

        /// Before `start` nothing is asked; stopped before any call, it never launches, and refuses what comes.
        @Test func notStartedOrStoppedRefuses() throws {
            let authenticator = Authenticator()
            let ask = {
                authenticator.add(
                    Self.call(1), url: SecretURL("http://127.0.0.1:1/"), header: .icecast, timeout: 1, from: Self.host
                ) { _ in }
            }
            #expect(ask() == "authentication is not running")
            try authenticator.start()
            #expect(authenticator.stop(timeout: 1))
            #expect(ask() == "authentication unavailable")
            #expect(authenticator.heartbeats.isEmpty)
            #expect(authenticator.counters.overCap.load(ordering: .relaxed) == 2)
        }

        /// A session's remove goes once, however many times it is ended, and when it is dropped unended.
        @Test func aSessionSendsOneRemove() throws {
            let (backend, seen) = try Self.countingBackend()
            defer { backend.stop() }
            let authenticator = Authenticator()
            try authenticator.start()
            defer { authenticator.stop(timeout: 5) }
            let url = SecretURL(backend.baseURL + "/remove")
            let ended = ListenerSession(
                call: Self.call(1), removeURL: url, timeout: 2, authenticator: authenticator, began: monotonicNow(),
                timeLimit: nil)
            ended.end(.left)
            ended.end(.tooSlow)
            var dropped: ListenerSession? = ListenerSession(
                call: Self.call(2), removeURL: url, timeout: 2, authenticator: authenticator, began: monotonicNow(),
                timeLimit: 30)
            #expect(dropped?.endsAt.map { $0 > monotonicNow() + 29 } == true)
            dropped = nil
            #expect(waitUntil(5) { authenticator.counters.removesSent.load(ordering: .relaxed) == 2 })
            #expect(seen.count.load(ordering: .relaxed) == 2)
        }
    }
}
