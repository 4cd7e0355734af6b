import CLinux
import Glibc

/// Seconds on the monotonic clock: the project's one clock for pacing, flush deadlines and durations. Rules that
/// depend on time take `now` as a parameter instead of calling this, so tests drive them on virtual time.
package func monotonicNow() -> Double {
    var now = timespec()
    // CLOCK_MONOTONIC cannot fail on Linux (it exists since 2.6 and `now` is a valid pointer).
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Seconds since the Unix epoch on the wall clock: only for dates shown to peers (HLS program dates, HTTP `Date`
/// and `Last-Modified`), never for durations.
package func wallClockNow() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
