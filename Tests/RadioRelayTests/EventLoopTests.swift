import Dispatch
import Foundation
import Glibc
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The loop skeleton every network thread runs, on a real listening socket and real eventfds, with a handler that
/// records what it is told: each wake-up source arrives as itself, a deadline comes back once, a connection is
/// handed over with its client, and a PROXY header names the client only from a trusted balancer. Waits are for a
/// recorded event (a semaphore with a deadline), never a fixed sleep.
@Suite(.timeLimit(.minutes(1))) struct EventLoopTests {
    /// Records the skeleton's calls (on the loop's thread) for the test's thread.
    final class Recorder: WakeUpHandler, @unchecked Sendable {
        let lock = NSLock()
        private var recorded: [String] = []
        let arrived = DispatchSemaphore(value: 0)
        var proxies: ExpectedProxies?
        /// A deadline to set on the first look before a sleep (key, seconds from then).
        var firstDeadline: (key: Int32, after: Double)?
        weak var loop: EventLoop?

        var events: [String] { lock.withLock { recorded } }

        /// Events kept at most: a skeleton that spins (an eventfd it does not drain) fills no memory, and the tests
        /// that count events fail instead of hanging.
        static let limit = 1000

        func record(_ event: String) {
            lock.withLock { if recorded.count < Self.limit { recorded.append(event) } }
            arrived.signal()
        }

        /// Waits (at most 5 s) until an event satisfying `match` was recorded.
        func waitFor(_ match: (String) -> Bool) -> Bool {
            let deadline = DispatchTime.now() + 5
            while !events.contains(where: match) {
                // The deadline holds even when signals keep coming (a loop that spins signals at every turn).
                guard DispatchTime.now() < deadline, arrived.wait(timeout: deadline) == .success else {
                    return events.contains(where: match)
                }
            }
            return true
        }

        func accepted(
            _ socket: consuming FileDescriptor, peer: SocketAddress, via: ArrivalPath, on listening: Int32
        ) {
            let path =
                switch via {
                case .direct: "direct"
                case .proxied(let balancer): "proxied by \(balancer.host)"
                case .unnamed: "unnamed"
                case .local: "local"
                }
            record("accepted \(peer.host):\(peer.port) \(path)")  // the socket closes here
        }

        func woken(_ source: Int) { record("woken \(source)") }
        func ready(_ fd: Int32, mask: UInt32) {}
        func expired(_ fd: Int32, now: Double) { record("expired \(fd)") }

        func prepare(now: Double) -> Double? {
            if let (key, after) = firstDeadline {
                firstDeadline = nil
                loop?.deadlines.set(key, now + after)
            }
            return nil
        }

        func awake() {}
        func settle() {}
    }

    /// A running skeleton over a fresh listening socket on 127.0.0.1 and two eventfds.
    final class Running: @unchecked Sendable {
        let listening: FileDescriptor
        let first: EventFD
        let second: EventFD
        let port: UInt16
        let recorder = Recorder()
        let thread: ServiceThread

        init(proxies: ExpectedProxies? = nil, deadline: (Int32, Double)? = nil) throws {
            let address = try #require(SocketAddress(host: "127.0.0.1", port: 0))
            listening = try listeningSocket(on: address, backlog: 16, purpose: " (test)")
            port = try SocketAddress.local(of: listening.rawValue).port
            first = try EventFD()
            second = try EventFD()
            recorder.proxies = proxies
            recorder.firstDeadline = deadline
            let recorder = recorder
            let (listenFD, wakeFDs) = (listening.rawValue, [first.rawValue, second.rawValue])
            thread = ServiceThread(
                name: "test-loop",
                onUnexpectedExit: { _, error in Issue.record("the loop ended: \(String(describing: error))") },
                body: { thread in
                    // Made on its own thread, like every loop (it is confined there).
                    let loop = try EventLoop(
                        label: "test", listenFD: listenFD, wakeFDs: wakeFDs, acceptBatch: 4, tick: 50)
                    // The PROXY header, as the stage a station's or the front end's loop is given.
                    loop.arrivals = ProxyStage(
                        capacity: 1024, expected: { _ in recorder.proxies },
                        refused: { peer, _ in recorder.record("refused \(peer.host)") })
                    recorder.loop = loop
                    try loop.run(in: thread, recorder)
                })
            try thread.start()
        }

        func stop() {
            thread.requestStop()
            try? first.signal()
            #expect(thread.stop(timeout: 5))
        }
    }

    @Test func eachWakeUpSourceArrivesAsItselfAndADeadlineComesBackOnce() throws {
        let running = try Running(deadline: (99, 0.05))
        defer { running.stop() }
        try running.second.signal()
        #expect(running.recorder.waitFor { $0 == "woken 1" }, "\(running.recorder.events)")
        #expect(!running.recorder.events.contains("woken 0"), "\(running.recorder.events)")
        try running.first.signal()
        #expect(running.recorder.waitFor { $0 == "woken 0" }, "\(running.recorder.events)")
        #expect(running.recorder.waitFor { $0 == "expired 99" }, "\(running.recorder.events)")
        // Drained at once: one signal is one wake-up, and the deadline was handed back once.
        try running.second.signal()
        #expect(running.recorder.waitFor { _ in running.recorder.events.filter { $0 == "woken 1" }.count == 2 })
        let events = running.recorder.events
        #expect(events.filter { $0 == "woken 1" }.count == 2, "\(events.prefix(20))")
        #expect(events.count < 20, "the loop kept waking: \(events.prefix(20))")
        #expect(running.recorder.events.filter { $0 == "expired 99" }.count == 1, "\(running.recorder.events)")
    }

    @Test func aConnectionIsHandedOverWithItsClient() throws {
        let running = try Running()
        defer { running.stop() }
        let client = try ListenerClient(port: running.port, source: "127.0.0.3")
        defer { client.close() }
        #expect(
            running.recorder.waitFor { $0.hasPrefix("accepted 127.0.0.3:") && $0.hasSuffix(" direct") },
            "\(running.recorder.events)")
    }

    @Test func aProxyHeaderNamesTheClientOnlyFromATrustedBalancer() throws {
        let trusted = try #require(TrustedProxies(parsing: "127.0.0.0/8"))
        let running = try Running(proxies: ExpectedProxies(trusted, setting: "proxy_from"))
        defer { running.stop() }
        let balancer = try ListenerClient(port: running.port, source: "127.0.0.4")
        defer { balancer.close() }
        balancer.send(
            ProxyHeaderBytes.v1(
                source: ProxyHeaderBytes.endpoint("192.0.2.7", 40_000),
                destination: ProxyHeaderBytes.endpoint("127.0.0.1", running.port)))
        #expect(
            running.recorder.waitFor { $0 == "accepted 192.0.2.7:40000 proxied by 127.0.0.4" },
            "\(running.recorder.events)")

        let elsewhere = try #require(TrustedProxies(parsing: "10.0.0.0/8"))
        let strict = try Running(proxies: ExpectedProxies(elsewhere, setting: "proxy_from"))
        defer { strict.stop() }
        let stranger = try ListenerClient(port: strict.port, source: "127.0.0.5")
        defer { stranger.close() }
        stranger.send(
            ProxyHeaderBytes.v1(
                source: ProxyHeaderBytes.endpoint("192.0.2.8", 40_001),
                destination: ProxyHeaderBytes.endpoint("127.0.0.1", strict.port)))
        #expect(strict.recorder.waitFor { $0 == "refused 127.0.0.5" }, "\(strict.recorder.events)")
        let (_, closed) = stranger.read(for: 2)
        #expect(closed, "an untrusted balancer's connection stays open")
        #expect(!strict.recorder.events.contains { $0.hasPrefix("accepted") }, "\(strict.recorder.events)")
    }
}
