import Dispatch
import RadioRelayTestSupport
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Threads that are joined, groups that start in order and stop in reverse, and the watchdog's verdict on
/// heartbeats (on virtual time).
@Suite(.timeLimit(.minutes(1))) struct LifecycleTests {
    @Test func aThreadRunsUntilAskedToStopAndIsJoined() throws {
        let started = DispatchSemaphore(value: 0)
        let iterations = Atomic<Int>(0)
        let thread = ServiceThread(
            name: "test-loop",
            onUnexpectedExit: { name, _ in
                Issue.record("\(name) reported an unexpected exit")
            },
            body: { thread in
                while !thread.isStopping {
                    thread.beat()
                    if iterations.add(1, ordering: .relaxed).newValue == 1 { started.signal() }
                }
            }
        )
        try thread.start()
        #expect(started.wait(timeout: .now() + 10) == .success)
        #expect(thread.isRunning)
        #expect(thread.stop(timeout: 10))
        // Joined: the body has returned, so the count no longer moves.
        #expect(!thread.isRunning)
        let final = iterations.load(ordering: .relaxed)
        #expect(final >= 1 && thread.heartbeat.load(ordering: .relaxed) == final)
        #expect(thread.stop(timeout: 1))  // a second stop is harmless
    }

    @Test func aThreadThatEndsByItselfIsReportedWithItsError() throws {
        struct Broken: Error {}
        let reported = DispatchSemaphore(value: 0)
        let seen = LockedBox<String?>(nil)
        let thread = ServiceThread(
            name: "test-dies",
            onUnexpectedExit: { name, error in
                seen.withLock { $0 = "\(name): \(error.map { "\($0)" } ?? "no error")" }
                reported.signal()
            },
            body: { _ in throw Broken() }
        )
        try thread.start()
        #expect(reported.wait(timeout: .now() + 10) == .success)
        #expect(seen.snapshot == "test-dies: Broken()")
        #expect(thread.stop(timeout: 10))
    }

    @Test func aThreadThatIgnoresStopIsReportedAfterTheTimeout() throws {
        let release = DispatchSemaphore(value: 0)
        let thread = ServiceThread(
            name: "test-stuck",
            onUnexpectedExit: { _, _ in },
            body: { _ in _ = release.wait(timeout: .now() + 30) }
        )
        try thread.start()
        #expect(!thread.stop(timeout: 0.05))
        release.signal()
    }

    final class Recorder: Service, @unchecked Sendable {
        let name: String
        let log: LockedBox<[String]>
        let failsToStart: Bool
        init(_ name: String, log: LockedBox<[String]>, failsToStart: Bool = false) {
            self.name = name
            self.log = log
            self.failsToStart = failsToStart
        }
        struct Refused: Error {}
        func start() throws {
            log.withLock { $0.append("start \(name)") }
            if failsToStart { throw Refused() }
        }
        func stop(timeout: Double) -> Bool {
            log.withLock { $0.append("stop \(name)") }
            return name != "b"
        }
    }

    @Test func aGroupStartsInOrderAndStopsInReverse() throws {
        let log = LockedBox<[String]>([])
        let group = ServiceGroup(["a", "b", "c"].map { Recorder($0, log: log) })
        try group.start()
        #expect(!group.stop(timeout: 1))  // "b" reports a thread that outlived its timeout
        #expect(log.snapshot == ["start a", "start b", "start c", "stop c", "stop b", "stop a"])
        #expect(group.stop(timeout: 1))  // nothing left to stop
    }

    @Test func aGroupThatFailsToStartStopsWhatItStarted() {
        let log = LockedBox<[String]>([])
        let group = ServiceGroup([
            Recorder("a", log: log), Recorder("x", log: log, failsToStart: true),
            Recorder("c", log: log),
        ])
        #expect(throws: Recorder.Refused.self) { try group.start() }
        #expect(log.snapshot == ["start a", "start x", "stop a"])
    }

    @Test func theWatchdogWithholdsThePingWhenAThreadStopsBeating() {
        var watchdog = Watchdog()
        #expect(watchdog.check(beats: [0, 0], now: 100) == .alive)
        #expect(watchdog.check(beats: [5, 3], now: 101) == .alive)
        // The second thread hangs; the first keeps going.
        #expect(watchdog.check(beats: [9, 3], now: 102) == .alive)
        #expect(watchdog.check(beats: [12, 3], now: 103.9) == .alive)
        #expect(watchdog.check(beats: [15, 3], now: 104) == .stuck(seconds: 3))
        #expect(watchdog.check(beats: [18, 3], now: 110) == .stuck(seconds: 9))
        // It comes back: pings resume at once.
        #expect(watchdog.check(beats: [20, 4], now: 111) == .alive)
        // A station added: the new set of threads starts afresh.
        #expect(watchdog.check(beats: [20, 4, 0, 0], now: 200) == .alive)
        #expect(watchdog.check(beats: [20, 4, 0, 0], now: 202) == .alive)
        #expect(watchdog.check(beats: [21, 5, 1, 0], now: 203) == .stuck(seconds: 3))
    }
}
