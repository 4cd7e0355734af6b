import Foundation
import RadioRelayNet

/// A made-up audience for the tests of listening reports: sessions with known starts, lengths and mounts (some
/// moved between mounts, some probes, some a relay's edges, some without an ID, two runs of the server), their
/// access log lines as the server's own writer (`AccessLog.line`) writes them, and the report's figures worked out
/// the slow way — second by second — to compare with `ListeningReport`'s.
package struct SyntheticAudience {
    /// A stretch of listening on one mount: a session has one, or two when it was moved.
    package struct Stint {
        package var mount: String
        /// The request the line holds: `TCP /jazz.opus`, `GET /jazz.mp3 HTTP/1.1`, `GET /jazz/live.m3u8 HTTP/1.1`.
        package var request: ListenerRequest?
        package var start: Int64
        package var end: Int64
    }

    package struct Session {
        package var run: String
        package var id: UInt64?
        package var address: String
        package var userAgent: String
        package var stints: [Stint]
        package var seconds: Int64 { stints.reduce(0) { $0 + $1.end - $1.start } }
        package var isEdge: Bool { userAgent.hasPrefix("radio-relay/") }
    }

    /// The figures of one row, as `ListeningReport.Figures` has them.
    package struct Expected: Equatable, CustomStringConvertible {
        package var sessions = 0
        package var unique = 0
        package var seconds: Int64 = 0
        package var median: Int64 = 0
        package var mean = 0.0
        package var peak = 0
        package var peakAt: Int64?
        package var hours = [Int64](repeating: 0, count: 24)
        package var probes = 0
        package var edges = 0

        package init() {}

        package var description: String {
            "sessions \(sessions) unique \(unique) seconds \(seconds) median \(median) mean \(mean) peak \(peak) "
                + "at \(peakAt.map(String.init) ?? "-") probes \(probes) edges \(edges) hours \(hours)"
        }
    }

    package static let secondRun = "0badcafe"
    /// A raw TCP mount, then three HTTP ones (an HLS directory among them).
    package static let mounts = ["/jazz.opus", "/jazz.mp3", "/jazz/", "/news.opus"]
    static let agents = [
        "VLC/3.0.18 LibVLC/3.0.18", "Mozilla/5.0 (X11; Linux x86_64)", "foobar2000/2.1", "Player \"Q\" \\ 2",
        "radio-relay/1.4 (edge)",
    ]

    package var sessions: [Session] = []
    package let from: Int64
    package let until: Int64

    /// `count` sessions between `from` and `from + days` days, drawn from `seed`.
    package init(seed: UInt64, count: Int, from: Int64, days: Int64) {
        self.from = from
        until = from + days * 86_400
        var random = SplitMix64(seed: seed)
        var ids: [String: UInt64] = [ListenerID.run: 0, Self.secondRun: 0]
        for index in 0..<count {
            let listener = Int.random(in: 0..<150, using: &random)
            var agent = Self.agents[listener % 7 == 6 ? 4 : listener % 4]
            let start = Int64.random(in: from..<(until - 1), using: &random)
            let length: Int64
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<10: length = .random(in: 0...4, using: &random)  // probes
            case 10..<70: length = .random(in: 5...3_600, using: &random)
            case 70..<97: length = .random(in: 3_600...14_400, using: &random)
            default: length = .random(in: 86_400...200_000, using: &random)  // a day or more
            }
            let end = min(until, start + length)
            let run = index % 7 == 0 ? Self.secondRun : ListenerID.run
            var id: UInt64?
            if index % 50 != 3 {
                ids[run, default: 0] += 1
                id = ids[run]
            }
            let mount = Self.mounts[Int.random(in: 0..<4, using: &random)]
            var stints = [Self.stint(mount, start, end)]
            if mount == "/jazz.opus" {
                agent = "-"  // a raw TCP listener sends no request: its line has no user agent
            } else if index % 20 == 5, id != nil, end - start >= 2 {
                // Moved to another HTTP mount part of the way through: a line per mount, one ID.
                let moved = start + (end - start) / 3
                let other = Self.mounts[(Self.mounts.firstIndex(of: mount) ?? 0) % 3 + 1]
                stints = [Self.stint(mount, start, moved), Self.stint(other, moved, end)]
            }
            sessions.append(
                Session(
                    run: run, id: id, address: "10.0.\(listener / 100).\(listener % 100)", userAgent: agent,
                    stints: stints))
        }
    }

    static func stint(_ mount: String, _ start: Int64, _ end: Int64) -> Stint {
        let request: ListenerRequest?
        switch mount {
        case "/jazz.opus": request = nil
        case "/jazz/": request = ListenerRequest(line: "GET /jazz/live.m3u8 HTTP/1.1")
        default: request = ListenerRequest(line: "GET \(mount) HTTP/1.1")
        }
        return Stint(mount: mount, request: request, start: start, end: end)
    }

    /// Every stint's access log line, with the time it was written (when the listener left), by that time.
    package func lines() -> [(leave: Int64, text: String)] {
        var lines: [(leave: Int64, text: String)] = []
        for session in sessions {
            for stint in session.stints {
                var request = stint.request
                if request != nil { request?.userAgent = session.userAgent }
                let record = AccessRecord(
                    host: session.address, time: Double(stint.end), id: session.id.map(ListenerID.init),
                    mount: stint.mount, request: request, bytes: Int(stint.end - stint.start) * 12_000,
                    seconds: Double(stint.end - stint.start))
                var text = AccessLog.line(record)
                if session.run != ListenerID.run, session.id != nil {
                    text = text.replacingFirst("\(ListenerID.run)-", with: "\(session.run)-")
                }
                lines.append((stint.end, text))
            }
        }
        return lines.sorted { $0.leave < $1.leave }
    }

    /// The rows worked out second by second: for each row name (a mount, or its station), and `total`.
    package func expected(minSeconds: Int64, stations: [String: String] = [:]) -> (
        rows: [String: Expected], total: Expected
    ) {
        func group(_ mount: String) -> String { stations[mount] ?? mount }
        let names = Set(sessions.flatMap { $0.stints.map { group($0.mount) } })
        var rows: [String: Expected] = [:]
        for name in names { rows[name] = figures(minSeconds) { group($0) == name } }
        return (rows, figures(minSeconds) { _ in true })
    }

    private func figures(_ minSeconds: Int64, where included: (String) -> Bool) -> Expected {
        var expected = Expected()
        var occupancy = [Int](repeating: 0, count: Int(until - from) + 1)
        var lengths: [Int64] = []
        var listeners = Set<String>()
        for session in sessions {
            let stints = session.stints.filter { included($0.mount) }
            if stints.isEmpty { continue }
            if session.isEdge {
                expected.edges += 1
                continue
            }
            // A probe is judged on the whole session, every mount together.
            if session.seconds < minSeconds {
                expected.probes += 1
                continue
            }
            lengths.append(stints.reduce(0) { $0 + $1.end - $1.start })
            listeners.insert(session.address + "\u{0}" + session.userAgent)
            for stint in stints {
                for second in stint.start..<stint.end {
                    occupancy[Int(second - from)] += 1
                    expected.hours[Int(second % 86_400 / 3_600)] += 1
                }
            }
        }
        lengths.sort()
        expected.sessions = lengths.count
        expected.unique = listeners.count
        expected.seconds = lengths.reduce(0, +)
        if !lengths.isEmpty {
            expected.median = lengths[(lengths.count - 1) / 2]
            expected.mean = Double(expected.seconds) / Double(lengths.count)
        }
        expected.peak = occupancy.max() ?? 0
        if expected.peak > 0, let first = occupancy.firstIndex(of: expected.peak) {
            expected.peakAt = from + Int64(first)
        }
        return expected
    }
}

extension String {
    /// The string with the first occurrence of `target` replaced.
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
