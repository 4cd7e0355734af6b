/// When the pipeline next tries its upstream: a pure value on virtual time.
///
/// Delays use decorrelated jitter: each is drawn between the first delay and three times the previous one, capped
/// at the last, so a crowd of relays that lost the same server does not come back in step. A connection that stays
/// up for `stableAfter` seconds resets the delay entirely. One that delivered for at least `deliveredAfter` seconds
/// but not a minute (a server that drops its sources now and then) is followed by the first delay with at most half
/// of it as jitter: listeners hear a short gap, not a growing one. Failures without such a connection keep growing.
package struct ReconnectSchedule: Equatable, Sendable {
    package private(set) var delays: ClosedRange<Double>
    /// Seconds a connection must last before its failure starts again from the first delay.
    package let stableAfter: Double
    /// Seconds a connection must have delivered for its failure to be retried after about the first delay.
    package let deliveredAfter = 10.0
    /// The last delay waited (0 before any failure, or after a stable connection).
    package private(set) var previous = 0.0
    /// Monotonic time of the next attempt.
    package private(set) var nextAttempt = 0.0
    /// Failures so far.
    package private(set) var failures = 0
    /// When the current connection delivered its first bytes.
    package private(set) var connectedAt: Double?

    package init(delays: ClosedRange<Double>, stableAfter: Double = 60) {
        self.delays = delays
        self.stableAfter = stableAfter
    }

    package func isDue(now: Double) -> Bool { now >= nextAttempt }

    /// New delays (a reload); the next failure uses them.
    package mutating func update(delays: ClosedRange<Double>) {
        self.delays = delays
        previous = min(previous, delays.upperBound)
    }

    /// Records a failure at `now`; returns how long until the next attempt. `random` is uniform in 0..<1.
    package mutating func failed(now: Double, random: Double) -> Double {
        let first = delays.lowerBound
        let lasted = connectedAt.map { now - $0 } ?? 0
        connectedAt = nil
        let r = random.isFinite ? max(0, min(1, random)) : 0
        if lasted >= stableAfter { previous = 0 }
        if lasted >= deliveredAfter {
            let wait = min(delays.upperBound, first * (1 + r / 2))
            previous = first
            failures += 1
            nextAttempt = now + wait
            return wait
        }
        let upper = min(delays.upperBound, max(first, previous * 3))
        let wait = min(delays.upperBound, first + r * (upper - first))
        previous = wait
        failures += 1
        nextAttempt = now + wait
        return wait
    }

    /// The upstream delivered at `now`.
    package mutating func connected(now: Double) {
        if connectedAt == nil { connectedAt = now }
    }

    /// A finished input that loops (a file) starts again at once.
    package mutating func again() { nextAttempt = 0 }
}
