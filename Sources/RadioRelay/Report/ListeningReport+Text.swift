import RadioRelaySystem

/// What a report says beyond its figures: what it read, and every line it did not count and why.
package struct ReportSources: Sendable, Equatable {
    package var files: [String]
    package var counts: AccessLogTally.Counts
    /// Lines kept at most (`AccessLogTally.limit`).
    package var limit: Int
    /// The first unreadable lines, `FILE:LINE: reason`.
    package var examples: [String]
    /// About whole files: gzip data cut short or corrupt, the text limit reached.
    package var notes: [String]

    package init(files: [String], tally: AccessLogTally, notes: [String]) {
        self.files = files
        counts = tally.counts
        limit = tally.limit
        examples = tally.examples
        self.notes = notes
    }
}

/// The report for a terminal: a table of the rows, the hours of day, and what was left out.
extension ListeningReport {
    package func text(_ sources: ReportSources) -> String {
        let rows = groups + [total]
        let label = options.stations.isEmpty ? "mount" : "station or mount"
        let names = rows.map { Self.shown($0.name) }
        let width = max(label.count, names.map(\.count).max() ?? 0)
        var out =
            "radio-relay listening report: \(sources.files.count) file\(sources.files.count == 1 ? "" : "s"), "
            + "\(sources.counts.lines) lines"
        if let first = total.first, let last = total.last {
            out += ", \(Self.date(first)) to \(Self.date(last))"
        }
        out +=
            "\nsessions of \(options.minSeconds) s or more; a listener ID is a session: one moved between mounts "
            + "counts once in the total, its time on each mount\n\n"
        out += Self.pad(label, width) + "  sessions   unique  listening h     median       mean     peak  peak at\n"
        for (row, name) in zip(rows, names) {
            out +=
                Self.pad(name, width) + Self.aligned(row.sessions, 10) + Self.aligned(row.uniqueListeners, 9)
                + Self.aligned(Self.hours(row.listeningSeconds), 13) + Self.aligned(Self.clock(row.medianSeconds), 11)
                + Self.aligned(Self.clock(Self.whole(row.meanSeconds)), 11) + Self.aligned(row.peakListeners, 9)
                + "  " + (row.peakAt.map(Self.date) ?? "-") + "\n"
        }
        out += "\nlistening hours by hour of day (UTC; each session's seconds in each clock hour, all days together):\n"
        let busiest = total.hourSeconds.max() ?? 0
        for (hour, seconds) in total.hourSeconds.enumerated() {
            let bar = busiest > 0 ? Int((Double(seconds) / Double(busiest) * 40).rounded()) : 0
            out +=
                "  \(Self.two(hour)) " + Self.aligned(Self.hours(seconds), 12)
                + (bar > 0 ? "  " + String(repeating: "#", count: bar) : "") + "\n"
        }
        out += "each \(options.stations.isEmpty ? "mount" : "row"), 00h to 23h, scaled to its own busiest hour:\n"
        for (row, name) in zip(groups, names) {
            out += "  " + Self.pad(name, width) + "  |" + Self.sparkline(row.hourSeconds) + "|\n"
        }
        return out + "\n" + Self.accounting(sources, report: self)
    }

    /// What was not counted, line by line of the report: left out, duplicates, unreadable, missing, notes.
    static func accounting(_ sources: ReportSources, report: ListeningReport) -> String {
        let counts = sources.counts
        var out =
            "left out: \(count(report.total.probes, "probe")) (sessions under \(report.options.minSeconds) s), "
            + "\(count(report.total.edges, "relay edge")) (user agent radio-relay/…), "
            + "\(count(counts.titleEvents, "title-event subscriber")), "
            + "\(count(counts.notServed, "other answer")) (status not 2xx)\n"
        out += "duplicates: \(count(counts.duplicates, "line")) already read from another file, counted once\n"
        out += "unreadable: \(count(counts.unreadable, "line"))"
        if !sources.examples.isEmpty {
            out +=
                " (" + sources.examples.map { Sanitized.text($0, limit: 300) }.joined(separator: "; ")
                + (counts.unreadable > sources.examples.count ? "; …" : "") + ")"
        }
        out += "\n"
        out +=
            counts.dropped > 0
            ? "missing: \(count(Int(clamping: counts.dropped), "session")): the server dropped their lines (its "
                + "access log's markers)\n"
            : "missing: none (no marker of dropped lines)\n"
        if counts.overLimit > 0 {
            out +=
                "not counted: \(counts.overLimit) lines beyond the \(sources.limit) a report keeps: report fewer "
                + "files at a time\n"
        }
        for note in sources.notes { out += "note: \(Sanitized.text(note, limit: 600))\n" }
        return out
    }

    /// "1 line", "2 lines".
    static func count(_ value: Int, _ noun: String) -> String { "\(value) \(noun)\(value == 1 ? "" : "s")" }

    /// A name as a terminal shows it: printable, at most 40 bytes.
    static func shown(_ name: String) -> String { Sanitized.text(name, limit: 40) }

    /// Listening hours with two decimals, from seconds (rounded half up, in integers).
    static func hours(_ seconds: Int64) -> String {
        let hundredths = seconds / 36 + (seconds % 36 >= 18 ? 1 : 0)
        return "\(hundredths / 100).\(two(Int(hundredths % 100)))"
    }

    /// `H:MM:SS`.
    static func clock(_ seconds: Int64) -> String {
        let value = max(0, seconds)
        return "\(value / 3_600):\(two(Int(value / 60 % 60))):\(two(Int(value % 60)))"
    }

    /// A mean in whole seconds, rounded; never trapping on what a division made.
    static func whole(_ seconds: Double) -> Int64 {
        guard seconds.isFinite else { return 0 }
        return Int64(min(max(seconds, 0), 9e18).rounded())
    }

    /// The common log format's time, as the access log writes it.
    static func date(_ seconds: Int64) -> String { UTCTime(Double(seconds)).commonLogDate }

    /// The 24 hours as characters from " " (none) to "@" (its busiest hour).
    static func sparkline(_ hours: [Int64]) -> String {
        let ramp = Array(" .:-=+*#%@")
        let busiest = hours.max() ?? 0
        return String(
            hours.map { seconds -> Character in
                guard busiest > 0, seconds > 0 else { return ramp[0] }
                return ramp[max(1, Int((Double(seconds) / Double(busiest) * 9).rounded()))]
            })
    }

    static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// `value` right-aligned in `width` columns.
    static func aligned(_ value: some CustomStringConvertible, _ width: Int) -> String {
        let text = value.description
        return String(repeating: " ", count: max(1, width - text.count)) + text
    }
}
