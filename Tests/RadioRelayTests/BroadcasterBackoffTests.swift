import Glibc
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `AcceptBackoff` on virtual time: accept failures pause the listening socket instead of spinning, and are reported
/// once per interval with a count.
@Suite struct BroadcasterBackoffTests {
    @Test func theFirstFailurePausesATenthOfASecondAndIsReported() {
        var backoff = AcceptBackoff()
        let failure = backoff.failed(now: 100)
        #expect(failure == AcceptBackoff.Failure(resumeAt: 100.1, pause: 0.1, report: 1))
        #expect(backoff.resumeAt == 100.1)
    }

    @Test func pausesDoubleUpToOneSecondWhileFailuresGoOn() {
        var backoff = AcceptBackoff()
        var now = 0.0
        var pauses: [Double] = []
        for _ in 0..<7 {
            let failure = backoff.failed(now: now)
            pauses.append(failure.pause)
            now = failure.resumeAt
            let result1 = backoff.resumes(now: now)
            #expect(result1)
        }
        #expect(pauses == [0.1, 0.2, 0.4, 0.8, 1, 1, 1])
    }

    @Test func theSocketIsWatchedAgainOnceWhenThePauseIsOver() {
        var backoff = AcceptBackoff()
        _ = backoff.failed(now: 5)
        let result2 = backoff.resumes(now: 5.05)
        #expect(!result2)
        #expect(backoff.resumeAt == 5.1)
        let result3 = backoff.resumes(now: 5.1)
        #expect(result3)
        let result4 = backoff.resumes(now: 5.2)
        #expect(!result4)
        #expect(backoff.resumeAt == nil)
    }

    @Test func aSuccessfulAcceptStartsThePausesOverAgain() {
        var backoff = AcceptBackoff()
        _ = backoff.failed(now: 0)
        _ = backoff.failed(now: 0.1)
        #expect(backoff.pause == 0.2)
        backoff.accepted()
        let result5 = backoff.failed(now: 1)
        #expect(result5.pause == 0.1)
    }

    /// An hour of failures at the longest pause: one report per 10 s, each with the failures since the previous
    /// one, and nothing lost.
    @Test func failuresAreReportedOncePerIntervalWithTheirCount() {
        var backoff = AcceptBackoff()
        var now = 0.0
        var reports: [Int] = []
        var failures = 0
        while now < 3600 {
            let failure = backoff.failed(now: now)
            failures += 1
            if let count = failure.report { reports.append(count) }
            now = failure.resumeAt
            _ = backoff.resumes(now: now)
        }
        #expect(reports.count == 360 || reports.count == 361)
        #expect(reports.first == 1)
        #expect(reports.dropFirst(2).allSatisfy { $0 == 10 }, "\(reports.prefix(5))")
        #expect(reports.reduce(0, +) + backoff.unreported == failures)
    }

    /// Failures between which accepts succeed are still counted, not reported each time.
    @Test func flappingFailuresAreCountedNotEachReported() {
        var backoff = AcceptBackoff()
        var reports = 0
        for step in 0..<1000 {  // 100 s of fail, pause 0.1 s, accept one, fail again
            if backoff.failed(now: Double(step) * 0.1).report != nil { reports += 1 }
            backoff.accepted()
        }
        #expect(reports == 10)
    }

    @Test func onlyShortagesOfDescriptorsOrMemoryAreResourceShortages() {
        for code in [EMFILE, ENFILE, ENOBUFS, ENOMEM] { #expect(AcceptBackoff.isResourceShortage(code)) }
        for code in [ECONNABORTED, EPROTO, EINVAL, EAGAIN] { #expect(!AcceptBackoff.isResourceShortage(code)) }
    }
}
