import RadioRelaySystem

/// The report for spreadsheets and scripts: the same figures as the text, as CSV (one row per mount or station,
/// then the total) or as one JSON object. The columns are documented in the README ("Listening reports").
extension ListeningReport {
    /// The CSV columns, in order; `h00` … `h23` are listening seconds in that hour of day (UTC). The last five are
    /// the server's and filled on the `(total)` row only.
    package static let csvColumns =
        [
            "group", "mounts", "sessions", "unique_listeners", "listening_seconds", "listening_hours",
            "median_seconds", "mean_seconds", "peak_listeners", "peak_at", "probes", "edges",
        ] + (0..<24).map { "h" + two($0) } + [
            "title_events", "not_2xx", "duplicates", "unreadable", "missing_sessions",
        ]

    package func csv(_ sources: ReportSources) -> String {
        var out = Self.csvColumns.joined(separator: ",") + "\r\n"
        for (row, isTotal) in groups.map({ ($0, false) }) + [(total, true)] {
            var fields = [
                row.name, row.mounts.joined(separator: " "), "\(row.sessions)", "\(row.uniqueListeners)",
                "\(row.listeningSeconds)", Self.hours(row.listeningSeconds), "\(row.medianSeconds)",
                Self.tenths(row.meanSeconds), "\(row.peakListeners)", row.peakAt.map(Self.iso) ?? "",
                "\(row.probes)", "\(row.edges)",
            ]
            fields += row.hourSeconds.map { "\($0)" }
            let counts = sources.counts
            fields +=
                isTotal
                ? [
                    "\(counts.titleEvents)", "\(counts.notServed)", "\(counts.duplicates)", "\(counts.unreadable)",
                    "\(counts.dropped)",
                ] : ["", "", "", "", ""]
            out += fields.map(Self.csvField).joined(separator: ",") + "\r\n"
        }
        return out
    }

    package func json(_ sources: ReportSources) -> String {
        let counts = sources.counts
        var out = "{\"files\":[" + sources.files.map { JSONText.string($0) }.joined(separator: ",") + "]"
        out += ",\"lines\":\(counts.lines),\"min_seconds\":\(options.minSeconds)"
        out += ",\"hours\":\"listening seconds in each hour of the day, UTC, all days together\""
        out += ",\"groups\":[" + groups.map(Self.json).joined(separator: ",") + "]"
        out += ",\"total\":" + Self.json(total)
        out +=
            ",\"left_out\":{\"probes\":\(total.probes),\"edges\":\(total.edges)"
            + ",\"title_events\":\(counts.titleEvents),\"not_2xx\":\(counts.notServed)}"
        out += ",\"duplicates\":\(counts.duplicates),\"unreadable\":\(counts.unreadable)"
        out += ",\"unreadable_examples\":[" + sources.examples.map { JSONText.string($0) }.joined(separator: ",") + "]"
        out += ",\"missing_sessions\":\(counts.dropped),\"over_limit\":\(counts.overLimit)"
        out += ",\"notes\":[" + sources.notes.map { JSONText.string($0) }.joined(separator: ",") + "]}"
        return out + "\n"
    }

    private static func json(_ row: Figures) -> String {
        "{\"name\":\(JSONText.string(row.name)),\"mounts\":["
            + row.mounts.map { JSONText.string($0) }.joined(separator: ",") + "]"
            + ",\"sessions\":\(row.sessions),\"unique_listeners\":\(row.uniqueListeners)"
            + ",\"listening_seconds\":\(row.listeningSeconds),\"median_seconds\":\(row.medianSeconds)"
            + ",\"mean_seconds\":\(tenths(row.meanSeconds)),\"peak_listeners\":\(row.peakListeners)"
            + ",\"peak_at\":\(row.peakAt.map { JSONText.string(iso($0)) } ?? "null")"
            + ",\"first\":\(row.first.map { JSONText.string(iso($0)) } ?? "null")"
            + ",\"last\":\(row.last.map { JSONText.string(iso($0)) } ?? "null")"
            + ",\"probes\":\(row.probes),\"edges\":\(row.edges)"
            + ",\"hour_seconds\":[" + row.hourSeconds.map { "\($0)" }.joined(separator: ",") + "]}"
    }

    /// `2026-12-03T18:00:00Z`.
    static func iso(_ seconds: Int64) -> String {
        let text = UTCTime(Double(seconds)).iso8601
        return text.hasSuffix(".000Z") ? String(text.dropLast(5)) + "Z" : text
    }

    /// A mean with one decimal, never trapping.
    static func tenths(_ value: Double) -> String {
        guard value.isFinite else { return "0.0" }
        let scaled = Int64(min(max(value, 0), 9e17) * 10 + 0.5)
        return "\(scaled / 10).\(scaled % 10)"
    }

    /// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled; control
    /// characters removed.
    static func csvField(_ text: String) -> String {
        let clean = Sanitized.text(text, limit: 0)
        guard clean.contains(where: { $0 == "," || $0 == "\"" }) else { return clean }
        return "\"" + clean.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
