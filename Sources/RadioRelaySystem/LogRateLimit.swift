/// How often one kind of log line may be written, as a pure value on virtual time (tests: `LogRateLimitTests`).
///
/// Each key (a kind of line: refusals, moves, drops …) may write `limit` lines per `window` seconds; further lines
/// of that key are counted, not written. When the window is over, the count comes back once, either with the next
/// line of that key (`.writeAfter(suppressed:)`) or from `summaries(now:)`, which the owning thread calls now and
/// then, so a storm leaves one "… K more" line per key per window instead of one line per event.
package struct LogRateLimit<Key: Hashable & Sendable>: Sendable {
    package enum Admission: Equatable {
        case write
        /// Write it, after a line saying that `suppressed` lines of this key were left out.
        case writeAfter(suppressed: Int)
        case suppress
    }

    package let limit: Int
    package let window: Double

    private struct Window {
        var start: Double
        var written: Int
        var suppressed: Int
    }

    private var windows: [Key: Window] = [:]
    /// The earliest end of a window that holds suppressed lines, if any (so `summaries` costs nothing otherwise).
    package private(set) var nextSummary: Double?

    package init(limit: Int = 10, window: Double = 10) {
        self.limit = max(1, limit)
        self.window = window
    }

    package mutating func admit(_ key: Key, now: Double) -> Admission {
        guard var current = windows[key], now - current.start < window else {
            let suppressed = windows[key]?.suppressed ?? 0
            windows[key] = Window(start: now, written: 1, suppressed: 0)
            return suppressed > 0 ? .writeAfter(suppressed: suppressed) : .write
        }
        if current.written < limit {
            current.written += 1
            windows[key] = current
            return .write
        }
        current.suppressed += 1
        windows[key] = current
        let end = current.start + window
        nextSummary = min(nextSummary ?? end, end)
        return .suppress
    }

    /// The next key whose window is over with lines suppressed, and how many; nil when there is none now. The
    /// key's count is reset. Call it in a loop (`while let`).
    package mutating func summary(now: Double) -> (key: Key, suppressed: Int)? {
        guard let due = nextSummary, now >= due else { return nil }
        var found: (key: Key, suppressed: Int)?
        var later: Double?
        for (key, current) in windows where current.suppressed > 0 {
            let end = current.start + window
            if found == nil && now >= end {
                found = (key, current.suppressed)
                windows[key] = nil
            } else {
                later = min(later ?? end, end)
            }
        }
        nextSummary = later
        return found
    }
}
