import RadioRelaySystem

/// An output's listener statistics as a pure value on the time it is given (the network loops' monotonic clock;
/// virtual time in tests): listeners now, the most at once since start and over the last hour, the sessions that
/// ended with a histogram of their lengths, and the listening seconds of all sessions, those still going included.
/// Memory is bounded: one entry per minute of the last hour, one count per histogram bucket.
package struct ListenerStatistics: Sendable, Equatable {
    /// The upper bounds of the session-length buckets, in seconds (a last bucket holds the longer ones).
    package static let sessionBounds: [Double] = [10, 60, 300, 900, 1_800, 3_600, 14_400, 86_400]

    package private(set) var current = 0
    package private(set) var peak = 0
    /// Sessions that ended, their lengths by bucket (`sessionBounds`, then longer), and their seconds.
    package private(set) var sessions = 0
    package private(set) var buckets = [Int](repeating: 0, count: ListenerStatistics.sessionBounds.count + 1)
    package private(set) var endedSeconds = 0.0
    /// The sum of the start times of the sessions going on: their seconds at `now` are `current × now` less it.
    private var activeStarts = 0.0
    /// The most listeners at once in each minute (by minute number) that had a change, the last 61 at most.
    private var minutes: [(minute: Int64, peak: Int)] = []

    package init() {}

    package static func == (lhs: ListenerStatistics, rhs: ListenerStatistics) -> Bool {
        lhs.current == rhs.current && lhs.peak == rhs.peak && lhs.sessions == rhs.sessions
            && lhs.buckets == rhs.buckets && lhs.endedSeconds == rhs.endedSeconds
            && lhs.activeStarts == rhs.activeStarts && lhs.minutes.elementsEqual(rhs.minutes, by: { $0 == $1 })
    }

    /// A listener was admitted at `now`.
    package mutating func joined(at now: Double) {
        guard now.isFinite else { return }
        note(now) { $0 += 1 }
        activeStarts += now
    }

    /// A listener admitted at `start` left at `now`.
    package mutating func left(joinedAt start: Double, at now: Double) {
        guard now.isFinite, start.isFinite, current > 0 else { return }
        note(now) { $0 -= 1 }
        activeStarts -= start
        let seconds = max(0, now - start)
        sessions += 1
        endedSeconds += seconds
        let bucket = Self.sessionBounds.firstIndex { seconds <= $0 } ?? Self.sessionBounds.count
        buckets[bucket] += 1
    }

    /// The most listeners at once over the last hour (in whole minutes: the last 60 minutes and this one).
    package func peakLastHour(now: Double) -> Int {
        let minute = Self.minute(now)
        return minutes.reduce(current) { $1.minute > minute - 61 ? max($0, $1.peak) : $0 }
    }

    /// Seconds listened so far: the sessions that ended and those going on, up to `now`.
    package func listeningSeconds(now: Double) -> Double {
        guard now.isFinite else { return endedSeconds }
        return endedSeconds + max(0, Double(current) * now - activeStarts)
    }

    /// Applies a change of the count at `now`, and keeps this minute's most.
    private mutating func note(_ now: Double, _ change: (inout Int) -> Void) {
        let minute = Self.minute(now)
        if minutes.last?.minute != minute {
            // The count carried into the minute is its first value.
            minutes.append((minute, current))
            if minutes.count > 61 { minutes.removeFirst(minutes.count - 61) }
        }
        change(&current)
        peak = max(peak, current)
        minutes[minutes.count - 1].peak = max(minutes[minutes.count - 1].peak, current)
    }

    private static func minute(_ now: Double) -> Int64 {
        Int64((min(max(now, -1e15), 1e15) / 60).rounded(.down))
    }
}
