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
        var numbers = Numbers(lines)
        var byMount: [String: [Int]] = [:]
        for (index, line) in lines.enumerated() { byMount[line.mount, default: []].append(index) }
        var members: [String: (mounts: [String], lines: [Int])] = [:]
        for mount in byMount.keys.sorted() {
            let name = options.stations[mount] ?? mount
            members[name, default: ([], [])].mounts.append(mount)
            members[name, default: ([], [])].lines += byMount[mount] ?? []
        }
        let names = members.keys.sorted()
        groups = names.enumerated().map { group, name in
            let (mounts, indices) = members[name] ?? ([], [])
            return numbers.figures(
                name, mounts: mounts, of: indices, in: lines, group: Int32(group), options: options)
        }
        total = numbers.figures(
            Self.totalName, mounts: byMount.keys.sorted(), of: Array(lines.indices), in: lines,
            group: Int32(names.count), options: options)
    }

    /// Sessions and listeners numbered 0, 1, 2 … once (a dictionary pass each), so that each row counts them in
    /// arrays, marking what it has seen with its own number instead of clearing.
    private struct Numbers {
        /// Each line's session (a line without an ID is a session of its own) and listener.
        var session: [Int32] = []
        var listener: [Int32] = []
        /// Each session's seconds in all, every mount together, edges apart: what the probe rule looks at.
        var total: [Int64] = []
        /// The row that last counted a session (as listening, probe, edge) or a listener, and a session's seconds
        /// in that row.
        var counted: [Int32] = []
        var probed: [Int32] = []
        var edged: [Int32] = []
        var heard: [Int32] = []
        var length: [Int64] = []

        init(_ lines: [ListenedLine]) {
            var sessions: [SessionKey: Int32] = [:]
            var listeners: [ListenerKey: Int32] = [:]
            sessions.reserveCapacity(lines.count)
            session.reserveCapacity(lines.count)
            listener.reserveCapacity(lines.count)
            for line in lines {
                let number: Int32
                if let key = line.session {
                    number = Self.number(key, in: &sessions, next: Int32(truncatingIfNeeded: total.count))
                } else {
                    number = Int32(truncatingIfNeeded: total.count)
                }
                if number == total.count { total.append(0) }
                if !line.isEdge { total[Int(number)] = total[Int(number)].saturatingAdding(line.seconds) }
                session.append(number)
                listener.append(
                    Self.number(line.listener, in: &listeners, next: Int32(truncatingIfNeeded: listeners.count)))
            }
            counted = [Int32](repeating: -1, count: total.count)
            probed = counted
            edged = counted
            length = [Int64](repeating: 0, count: total.count)
            heard = [Int32](repeating: -1, count: listeners.count)
        }

        /// The key's number, given `next` when it has none yet (one lookup: the default subscript inserts it).
        private static func number<Key: Hashable>(_ key: Key, in table: inout [Key: Int32], next: Int32) -> Int32 {
            func read(_ value: inout Int32) -> Int32 { value }
            return read(&table[key, default: next])
        }

        mutating func figures(
            _ name: String, mounts: [String], of indices: [Int], in lines: [ListenedLine], group: Int32,
            options: Options
        ) -> Figures {
            var figures = Figures(name: name, mounts: mounts)
            var sessions: [Int32] = []
            var starts: [Int64] = []
            var ends: [Int64] = []
            for index in indices {
                let line = lines[index]
                let number = Int(session[index])
                if line.isEdge {
                    if edged[number] != group { figures.edges += 1 }
                    edged[number] = group
                    continue
                }
                if total[number] < options.minSeconds {
                    if probed[number] != group { figures.probes += 1 }
                    probed[number] = group
                    continue
                }
                if counted[number] != group {
                    counted[number] = group
                    length[number] = 0
                    sessions.append(Int32(number))
                }
                length[number] = length[number].saturatingAdding(line.seconds)
                let who = Int(listener[index])
                if heard[who] != group { figures.uniqueListeners += 1 }
                heard[who] = group
                figures.listeningSeconds = figures.listeningSeconds.saturatingAdding(line.seconds)
                figures.first = min(figures.first ?? line.start, line.start)
                figures.last = max(figures.last ?? line.leave, line.leave)
                if line.seconds > 0 {
                    starts.append(line.start)
                    ends.append(line.leave)
                }
                ListeningReport.addHours(from: line.start, to: line.leave, into: &figures.hourSeconds)
            }
            var lengths = sessions.map { length[Int($0)] }
            lengths.sort()
            figures.sessions = lengths.count
            if !lengths.isEmpty {
                figures.medianSeconds = lengths[(lengths.count - 1) / 2]
                figures.meanSeconds = Double(figures.listeningSeconds) / Double(lengths.count)
            }
            (figures.peakListeners, figures.peakAt) = ListeningReport.peak(starts: &starts, ends: &ends)
            return figures
        }
    }

    /// The most intervals [start, end) open at once, and the first second it happened: the starts and the ends
    /// sorted (the ends come nearly sorted, in the order listeners left), then walked together, an end before a
    /// start at the same second (so that a listener moved from one mount to another is never two).
    static func peak(starts: inout [Int64], ends: inout [Int64]) -> (Int, Int64?) {
        starts.sort()
        ends.sort()
        var open = 0
        var best = 0
        var at: Int64?
        var next = 0
        for start in starts {
            while next < ends.count && ends[next] <= start {
                open -= 1
                next += 1
            }
            open += 1
            if open > best {
                best = open
                at = start
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
