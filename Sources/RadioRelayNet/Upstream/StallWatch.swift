/// The stall rule every input follows, whatever carries it (HTTP, `tcp://`, a live source, a file or FIFO): an
/// input asked for more that sends nothing for `timeout` seconds has stalled, and is given up. A hung peer (a
/// stopped process, a blackholed path) keeps its connection "established" and errs nowhere, so only this rule ends
/// it. Time the reader spends not asking (a paced input whose read-ahead is full) does not count. A value on the
/// caller's clock, so that it is tested on virtual time.
package struct StallWatch: Sendable, Equatable {
    /// Seconds without a byte that make a stall (at least one).
    package let timeout: Double
    /// When the next byte is due at the latest, less `timeout`: the last byte, the last rest, or the start.
    package private(set) var last: Double

    /// Starts watching at `now`; the first byte may take `grace` seconds when that is longer than `timeout` (a
    /// connection being made within its connect timeout has not stalled).
    package init(timeout: Double, now: Double, grace: Double = 0) {
        self.timeout = max(1, timeout)
        last = now + max(0, grace - self.timeout)
    }

    /// Bytes arrived at `now` (the next are due within `timeout`, whatever the grace was).
    package mutating func received(now: Double) { last = now }

    /// The reader did not ask at `now` (its read-ahead is full): the wait so far does not count against the input.
    package mutating func resting(now: Double) { last = max(last, now) }

    /// Whether the input has stalled at `now`.
    package func stalled(now: Double) -> Bool { now - last >= timeout }

    /// How an error says it: `stalled: no data for 5 s`.
    package var message: String { "stalled: no data for \(Int(timeout)) s" }
}
