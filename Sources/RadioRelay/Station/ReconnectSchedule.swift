/// When the pipeline next tries its upstream: a pure value on virtual time.
///
/// Delays use decorrelated jitter: each is drawn between the first delay and three times the previous one, capped
/// at the last, so a crowd of relays that lost the same server does not come back in step. A connection that stays
/// up for `stableAfter` seconds resets the delay to the first one; one that fails sooner keeps growing it.
struct ReconnectSchedule: Equatable {
    let delays: ClosedRange<Double>
    /// Seconds a connection must last before its failure starts again from the first delay.
    let stableAfter: Double
    /// The last delay waited (0 before any failure, or after a stable connection).
    private(set) var previous = 0.0
    /// Monotonic time of the next attempt.
    private(set) var nextAttempt = 0.0
    /// Failures so far.
    private(set) var failures = 0
    /// When the current connection delivered its first bytes.
    private(set) var connectedAt: Double?

    init(delays: ClosedRange<Double>, stableAfter: Double = 60) {
        self.delays = delays
        self.stableAfter = stableAfter
    }

    func isDue(now: Double) -> Bool { now >= nextAttempt }

    /// Records a failure at `now`; returns how long until the next attempt. `random` is uniform in 0..<1.
    mutating func failed(now: Double, random: Double) -> Double {
        if let since = connectedAt, now - since >= stableAfter { previous = 0 }
        connectedAt = nil
        let first = delays.lowerBound
        let upper = min(delays.upperBound, max(first, previous * 3))
        let r = random.isFinite ? max(0, min(1, random)) : 0
        let wait = min(delays.upperBound, first + r * (upper - first))
        previous = wait
        failures += 1
        nextAttempt = now + wait
        return wait
    }

    /// The upstream delivered at `now`.
    mutating func connected(now: Double) {
        if connectedAt == nil { connectedAt = now }
    }

    /// A finished input that loops (a file) starts again at once.
    mutating func again() { nextAttempt = 0 }
}
