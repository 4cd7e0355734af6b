import Foundation
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane (light: the binary alone, no peers).
extension ServerProcessTests {
    /// `radio-relay report` as shipped, on a week of rotated access logs as logrotate leaves them: the server's own
    /// lines for a made-up audience whose figures are worked out second by second, one file a day, the five oldest
    /// gzipped by the `gzip` tool, yesterday's overlapping today's, with title-event subscribers, a marker of
    /// dropped lines and broken lines among them.
    @Suite(.timeLimit(.minutes(1))) struct ReportBinaryTests {
        /// 2026-12-02 00:00:00 UTC, a Wednesday: the week runs to 2026-12-09 00:00:00.
        static let start: Int64 = 1_796_169_600

        static func week(in directory: String) throws -> (audience: SyntheticAudience, files: [String], lines: Int) {
            let audience = SyntheticAudience(seed: 2_026, count: 2_000, from: start, days: 7)
            var days = [[String]](repeating: [], count: 7)
            func day(_ leave: Int64) -> Int { Int(min(6, max(0, (leave - start) / 86_400))) }
            for line in audience.lines() { days[day(line.leave)].append(line.text) }
            // Title-event subscribers (not listening), the server's marker of 17 dropped lines, two broken lines.
            for index in 0..<20 {
                days[index % 7].append(
                    "10.9.0.\(index) - - [0\(index % 7 + 1)/Dec/2026:12:00:00 +0000] \"GET /jazz/events HTTP/1.1\" "
                        + "200 900 \"-\" \"Mozilla/5.0\" 600")
            }
            days[3].append(
                "# radio-relay: 17 access log lines dropped before 03/Dec/2026:18:00:00 +0000 (run 0badcafe, 17 so far)"
            )
            days[5].append("this is not an access log line")
            days[2].append(
                "10.0.0.1 0badcafe-99999 - [31/Nov/2026:12:00:00 +0000] \"TCP /jazz.opus\" 200 1 \"-\" \"-\" 30")
            // Yesterday's file holds today's first 40 lines too (a rotation that overlapped).
            days[5] += days[6].prefix(40)
            var files: [String] = []
            for (index, lines) in days.enumerated() {
                let age = 6 - index
                let path = directory + (age == 0 ? "/access.log" : "/access.log.\(age)")
                try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
                if age >= 2 {
                    let gzip = try #require(tool("gzip"))
                    let zipped = try run(gzip, ["-9", path])
                    #expect(zipped.status == 0, "\(zipped.stderr)")
                    files.append(path + ".gz")
                } else {
                    files.append(path)
                }
            }
            return (audience, files, days.map(\.count).reduce(0, +))
        }

        static func hours(_ seconds: Int64) -> String {
            let hundredths = (seconds + 18) / 36
            return "\(hundredths / 100)." + (hundredths % 100 < 10 ? "0" : "") + "\(hundredths % 100)"
        }

        static func clock(_ seconds: Int64) -> String {
            String(format: "%d:%02d:%02d", seconds / 3_600, seconds / 60 % 60, seconds % 60)
        }

        static func date(_ seconds: Int64?) -> String {
            guard let seconds else { return "-" }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "dd/MMM/yyyy:HH:mm:ss Z"
            return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        }

        /// A row of the text table, as its words.
        static func words(_ name: String, _ row: SyntheticAudience.Expected) -> [String] {
            [
                name, "\(row.sessions)", "\(row.unique)", hours(row.seconds), clock(row.median),
                clock(Int64(row.mean.rounded())), "\(row.peak)",
            ] + date(row.peakAt).split(separator: " ").map(String.init)
        }

        @Test func aWeekOfRotatedLogs() throws {
            let executable = try #require(radioRelayExecutable())
            let directory = temporaryPath("report-week")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let (audience, files, lineCount) = try Self.week(in: directory)
            let shuffled = [files[3], files[6], files[0], files[5], files[1], files[4], files[2]]
            let expected = audience.expected(minSeconds: 5)

            let text = try run(executable, ["report"] + shuffled)
            #expect(text.status == 0 && text.stderr.isEmpty, "\(text.stderr)")
            let lines = text.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.first?.hasPrefix("radio-relay listening report: 7 files, \(lineCount) lines, ") == true)
            let table = lines.drop { !$0.hasPrefix("mount ") }.dropFirst().prefix { !$0.isEmpty }
            let rows = table.map { $0.split(separator: " ").map(String.init) }
            let names = expected.rows.keys.sorted()
            #expect(rows.map { $0.first ?? "" } == names + ["(total)"])
            for (row, name) in zip(rows, names) {
                #expect(row == Self.words(name, try #require(expected.rows[name])), "\(name)")
            }
            #expect(rows.last == Self.words("(total)", expected.total))
            let total = expected.total
            #expect(
                text.stdout.contains(
                    "left out: \(total.probes) probes (sessions under 5 s), \(total.edges) relay edges (user agent "
                        + "radio-relay/…), 20 title-event subscribers, 0 other answers (status not 2xx)\n"
                        + "duplicates: 40 lines already read from another file, counted once\n"
                        + "unreadable: 2 lines ("))
            #expect(text.stdout.contains("missing: 17 sessions: the server dropped their lines"))
            for hour in 0..<24 {
                #expect(text.stdout.contains("\n  \(hour < 10 ? "0" : "")\(hour) "))
            }

            // JSON: the same figures, exactly; hours of day in seconds.
            let json = try run(executable, ["report", "--json"] + shuffled.reversed())
            #expect(json.status == 0, "\(json.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let totals = try #require(object["total"] as? [String: Any])
            #expect(totals["sessions"] as? Int == total.sessions && totals["unique_listeners"] as? Int == total.unique)
            #expect(totals["listening_seconds"] as? Int == Int(total.seconds))
            #expect(
                totals["peak_listeners"] as? Int == total.peak && totals["median_seconds"] as? Int == Int(total.median))
            #expect(totals["hour_seconds"] as? [Int] == total.hours.map { Int($0) })
            #expect(object["duplicates"] as? Int == 40 && object["missing_sessions"] as? Int == 17)
            #expect(object["unreadable"] as? Int == 2 && (object["notes"] as? [String])?.isEmpty == true)

            // A station's mounts as one row: a listener moved between them is one session there.
            let stations = ["/jazz.opus": "jazz", "/jazz.mp3": "jazz", "/jazz/": "jazz"]
            let csv = try run(
                executable,
                ["report", "--csv"]
                    + stations.sorted { $0.key < $1.key }.flatMap { ["--station-of", "\($0.key)=\($0.value)"] }
                    + files)
            #expect(csv.status == 0)
            let jazz = try #require(audience.expected(minSeconds: 5, stations: stations).rows["jazz"])
            let row = try #require(csv.stdout.split(separator: "\r\n").first { $0.hasPrefix("jazz,") })
            let fields = row.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            #expect(
                Array(fields.prefix(5)) == [
                    "jazz", "/jazz.mp3 /jazz.opus /jazz/", "\(jazz.sessions)", "\(jazz.unique)", "\(jazz.seconds)",
                ])
            #expect(fields[8] == "\(jazz.peak)" && Array(fields[12..<36]) == jazz.hours.map { "\($0)" })
            #expect(csv.stderr.contains("2 unreadable lines"))

            // A file that cannot be read: no report, status 66.
            let missing = try run(executable, ["report", files[0], directory + "/nonexistent.log"])
            #expect(missing.status == 66 && missing.stdout.isEmpty && missing.stderr.contains("cannot open"))
        }
    }
}
