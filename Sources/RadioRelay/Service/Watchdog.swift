import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Decides whether the server is alive from its threads' heartbeats: a pure value on virtual time.
///
/// Every thread advances its heartbeat once per loop iteration (a pipeline every ≤ 20 ms, a network loop at least
/// every 500 ms). The ping is withheld once a thread has not moved for `allowance` seconds; if that lasts for
/// `WatchdogSec=`, systemd restarts the service.
struct Watchdog: Equatable {
    enum Verdict: Equatable {
        /// Every thread moved within the allowance: ping.
        case alive
        /// A thread has not moved for this many seconds.
        case stuck(seconds: Double)
    }

    /// Seconds a thread may go without a beat (a network loop sleeps up to 0.5 s; a slow libcurl call a little).
    var allowance = 3.0
    private var last: [Int] = []
    /// When each thread was last seen to move.
    private var moved: [Double] = []

    mutating func check(beats: [Int], now: Double) -> Verdict {
        if beats.count != last.count {
            // The set of threads changed (start-up, a station added): everyone starts afresh.
            last = beats
            moved = Array(repeating: now, count: beats.count)
            return .alive
        }
        var oldest = now
        for index in beats.indices {
            if beats[index] != last[index] {
                last[index] = beats[index]
                moved[index] = now
            }
            oldest = min(oldest, moved[index])
        }
        let still = now - oldest
        return still >= allowance ? .stuck(seconds: still) : .alive
    }
}
