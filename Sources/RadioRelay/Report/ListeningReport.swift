import RadioRelaySystem

/// The figures of a listening report: per mount (or per station, when `Options.stations` names the station of a
/// mount) and for the whole server, as a pure function of the lines an `AccessLogTally` kept. No clock, no files.
///
/// Rules, the same in every output (and in the README's "Listening reports"):
/// - A **session** is one listener ID (the run's token and the ID: `SessionKey`); a line without an ID is a
///   session of its own. A listener moved between mounts has one line per mount it listened on: it is **one
///   session** in the total (sessions, unique listeners, its length the sum of its lines) and a session on each
///   mount where it listened, its time counting on each of those mounts — so the total's listening time is the sum
///   of the mounts', and its sessions may be fewer than theirs.
/// - **Left out and counted apart**: sessions shorter than `minSeconds` in all (stream probes), and lines whose user
///   agent starts with `radio-relay/` (a relay's own edges).
/// - **Unique listeners**: distinct address and user agent pairs.
/// - **Listening time (TLH)**: the seconds of every line counted, summed.
/// - **Median session length**: the middle one of the sorted lengths, the lower middle for an even count; the mean
///   is the listening time over the sessions.
/// - **Peak concurrent listeners**: the most lines listening at once, each line the interval [left − seconds, left)
///   (an end and a start at the same second do not overlap, so a moved listener is never two), and the first second
///   it was reached.
/// - **Hours of day**: listening seconds in each clock hour of the day (UTC), all days together (they sum to the
///   listening time).
package struct ListeningReport: Sendable, Equatable {
    package struct Options: Sendable, Equatable {
        /// Sessions shorter than this (seconds, in all) are probes.
        package var minSeconds: Int64 = 5
        /// A mount's station (`--station-of MOUNT=STATION`): the mounts of one station are one row.
        package var stations: [String: String] = [:]

        package init(minSeconds: Int64 = 5, stations: [String: String] = [:]) {
            self.minSeconds = minSeconds
            self.stations = stations
        }
    }

    /// One row: a mount, a station's mounts, or the total.
    package struct Figures: Sendable, Equatable {
        package var name: String
        package var mounts: [String]
        package var sessions = 0
        package var uniqueListeners = 0
        package var listeningSeconds: Int64 = 0
        package var medianSeconds: Int64 = 0
        package var meanSeconds: Double = 0
        package var peakListeners = 0
        /// The first second at which `peakListeners` listened (Unix seconds); nil without sessions.
        package var peakAt: Int64?
        /// Listening seconds in each hour of the day, 00 to 23 UTC.
        package var hourSeconds = [Int64](repeating: 0, count: 24)
        /// Sessions left out as shorter than the minimum.
        package var probes = 0
        /// Sessions of a relay's edges, left out.
        package var edges = 0
        /// The earliest start and the latest leave of the sessions counted.
        package var first: Int64?
        package var last: Int64?

        package init(name: String, mounts: [String]) {
            self.name = name
            self.mounts = mounts
        }
    }

    package var options: Options
    /// The rows, by name.
    package var groups: [Figures]
    package var total: Figures

    package static let totalName = "(total)"

    package init(lines: [ListenedLine], options: Options = Options()) {
        self.options = options
        // A session's length in all, over every mount (edges apart): what the probe rule looks at.
        var lengths: [SessionKey: Int64] = [:]
        for line in lines where !line.isEdge {
            guard let session = line.session else { continue }
            lengths[session] = lengths[session, default: 0].saturatingAdding(line.seconds)
        }
        let minimum = options.minSeconds
        let isProbe: (ListenedLine) -> Bool = { line in
            (line.session.flatMap { lengths[$0] } ?? line.seconds) < minimum
        }
        var members: [String: [Int]] = [:]
        for (index, line) in lines.enumerated() {
            members[options.stations[line.mount] ?? line.mount, default: []].append(index)
        }
        groups = members.keys.sorted().map { name in
            let indices = members[name] ?? []
            return Self.figures(name, indices.lazy.map { lines[$0] }, isProbe: isProbe)
        }
        total = Self.figures(Self.totalName, lines, isProbe: isProbe)
    }

    private static func figures(
        _ name: String, _ lines: some Sequence<ListenedLine>, isProbe: (ListenedLine) -> Bool
    ) -> Figures {
        var figures = Figures(name: name, mounts: [])
        var mounts = Set<String>()
        var sessions: [SessionKey: Int64] = [:]
        var single: [Int64] = []  // lines without an ID: a session each
        var listeners = Set<ListenerKey>()
        var probes = Set<SessionKey>()
        var edges = Set<SessionKey>()
        var events: [Int64] = []  // 2 × time, + 1 for a start: ends sort before starts at the same second
        for line in lines {
            mounts.insert(line.mount)
            if line.isEdge {
                if let session = line.session { edges.insert(session) } else { figures.edges += 1 }
                continue
            }
            if isProbe(line) {
                if let session = line.session { probes.insert(session) } else { figures.probes += 1 }
                continue
            }
            if let session = line.session {
                sessions[session] = sessions[session, default: 0].saturatingAdding(line.seconds)
            } else {
                single.append(line.seconds)
            }
            listeners.insert(line.listener)
            figures.listeningSeconds = figures.listeningSeconds.saturatingAdding(line.seconds)
            figures.first = min(figures.first ?? line.start, line.start)
            figures.last = max(figures.last ?? line.leave, line.leave)
            if line.seconds > 0 {
                events.append(line.start * 2 + 1)
                events.append(line.leave * 2)
            }
            addHours(from: line.start, to: line.leave, into: &figures.hourSeconds)
        }
        figures.mounts = mounts.sorted()
        figures.edges += edges.count
        figures.probes += probes.count
        var lengths = Array(sessions.values) + single
        lengths.sort()
        figures.sessions = lengths.count
        figures.uniqueListeners = listeners.count
        if !lengths.isEmpty {
            figures.medianSeconds = lengths[(lengths.count - 1) / 2]
            figures.meanSeconds = Double(figures.listeningSeconds) / Double(lengths.count)
        }
        (figures.peakListeners, figures.peakAt) = peak(events)
        return figures
    }

    /// The most intervals open at once, and the first second it happened: a sweep over the sorted ends and starts
    /// (times doubled, a start odd, so that an end sorts before a start at the same second). Times are at most
    /// year 9999 in seconds (`AccessLogLine`), so doubling cannot overflow.
    static func peak(_ events: [Int64]) -> (Int, Int64?) {
        var sorted = events
        sorted.sort()
        var open = 0
        var best = 0
        var at: Int64?
        for event in sorted {
            if event & 1 == 1 {
                open += 1
                if open > best {
                    best = open
                    at = event >> 1
                }
            } else {
                open -= 1
            }
        }
        return (best, at)
    }

    /// Adds the seconds of [start, end) to the hours of the day they fall in: whole days at once, then hour by hour
    /// (at most 25 steps, whatever the length).
    static func addHours(from start: Int64, to end: Int64, into hours: inout [Int64]) {
        guard end > start, start >= 0, hours.count == 24 else { return }
        var time = start
        let days = (end - start) / 86_400
        if days > 0 {
            for hour in 0..<24 { hours[hour] = hours[hour].saturatingAdding(days.saturatingMultiplied(by: 3_600)) }
            time += days * 86_400
        }
        while time < end {
            let next = min(end, (time / 3_600 + 1) * 3_600)
            let hour = Int((time % 86_400) / 3_600)
            hours[hour] = hours[hour].saturatingAdding(next - time)
            time = next
        }
    }
}
