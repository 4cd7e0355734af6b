import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// What the network loop does when `accept4` fails for want of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM), as a pure
/// value on virtual time (tests: `BroadcasterBackoffTests`).
///
/// The listening socket is level-triggered: while a connection waits in the backlog, epoll reports it at once, so a
/// loop that retries at every wake-up spins a core (a million log lines in 6 s were seen). Instead the loop stops
/// watching the socket for a pause — 0.1 s, doubling to at most 1 s while failures go on, back to 0.1 s after a
/// successful accept — and watches it again when the pause is over. Waiting connections stay in the backlog (4096)
/// and are served once descriptors free up. Failures are reported at most once per `reportInterval`, with how
/// many there were since the last report.
package struct AcceptBackoff: Sendable, Equatable {
    package static let firstPause = 0.1
    package static let longestPause = 1.0
    package static let reportInterval = 10.0

    /// The last pause (0: accepting normally).
    package private(set) var pause = 0.0
    /// When the listening socket is to be watched again, while it is not.
    package private(set) var resumeAt: Double?
    /// Failures not reported yet.
    package private(set) var unreported = 0
    private var lastReport: Double?

    /// What to do after a failure: stop watching the socket until `resumeAt`; `report` (when set) is the number of
    /// failures to log now, this one included.
    package struct Failure: Equatable {
        package var resumeAt: Double
        package var pause: Double
        package var report: Int?
    }

    package mutating func failed(now: Double) -> Failure {
        pause = pause == 0 ? Self.firstPause : min(pause * 2, Self.longestPause)
        let until = now + pause
        resumeAt = until
        unreported += 1
        var report: Int?
        if lastReport.map({ now - $0 >= Self.reportInterval }) ?? true {
            report = unreported
            unreported = 0
            lastReport = now
        }
        return Failure(resumeAt: until, pause: pause, report: report)
    }

    /// True once, when the pause is over: the loop watches the listening socket again.
    package mutating func resumes(now: Double) -> Bool {
        guard let until = resumeAt, now >= until else { return false }
        resumeAt = nil
        return true
    }

    /// A connection was accepted: the next failure pauses briefly again. Failures not reported yet stay counted
    /// for the next report.
    package mutating func accepted() {
        pause = 0
    }

    /// Whether `errno` from `accept4` means "out of descriptors or memory" (pause) rather than a failed connection.
    package static func isResourceShortage(_ code: Int32) -> Bool {
        code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM
    }
}
