/// When the pipeline next tries its upstream: a pure value on virtual time. Each failure doubles the delay, from
/// the first to the last of `delays`; a connection that delivers resets it.
struct ReconnectSchedule: Equatable {
    let delays: ClosedRange<Double>
    /// The delay the next failure waits.
    private(set) var delay: Double
    /// Monotonic time of the next attempt.
    private(set) var nextAttempt = 0.0
    /// Failures so far.
    private(set) var failures = 0

    init(delays: ClosedRange<Double>) {
        self.delays = delays
        self.delay = delays.lowerBound
    }

    func isDue(now: Double) -> Bool { now >= nextAttempt }

    /// Records a failure at `now`; returns how long until the next attempt.
    mutating func failed(now: Double) -> Double {
        let wait = delay
        failures += 1
        nextAttempt = now + wait
        delay = min(delay * 2, delays.upperBound)
        return wait
    }

    /// The upstream delivered: the next failure waits the shortest delay again.
    mutating func connected() { delay = delays.lowerBound }

    /// A finished input that loops (a file) starts again at once.
    mutating func again() {
        nextAttempt = 0
        delay = delays.lowerBound
    }
}
