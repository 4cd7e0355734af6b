import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `radio-relay report`: its command line, its three outputs for a small log whose figures are known by hand, and
/// the access log's marker of dropped lines, written by the server and summed by the report.
@Suite struct ReportCommandTests {
    @Test func itsCommandLine() throws {
        guard
            case .report(let command) = try Command.parse([
                "report", "--json", "--min-seconds", "0", "--station-of", "/jazz.opus=jazz", "--station-of=/jazz/=jazz",
                "b.log", "--", "--csv",
            ])
        else {
            Issue.record("not a report")
            return
        }
        #expect(command.format == .json && command.options.minSeconds == 0)
        #expect(command.options.stations == ["/jazz.opus": "jazz", "/jazz/": "jazz"])
        #expect(command.files == ["b.log", "--csv"])
        guard case .report(let plain) = try Command.parse(["report", "a.log.gz", "-"]) else {
            Issue.record("not a report")
            return
        }
        #expect(plain.format == .text && plain.options.minSeconds == 5 && plain.files == ["a.log.gz", "-"])
        let help = HelpTopic.report.text
        #expect(help.hasPrefix("usage: radio-relay report [--csv|--json]"))
        for option in OptionSpecification.report { #expect(help.contains(option.synopsis)) }
        #expect(help.split(separator: "\n").allSatisfy { $0.count <= 120 })
        #expect(HelpTopic.overall.text.contains("report --help") && HelpTopic.overall.text.contains("ACCESS_LOG"))
    }

    /// A hand-made log: /a.opus has listener 1 (10:00–11:00) and listener 2 moved to /b.mp3 at 10:30 (10:15–10:45);
    /// a probe, an edge, a title-event subscriber, a marker of 3 dropped lines and a broken line.
    static let log = [
        "10.0.0.1 0000000a-1 - [02/Dec/2026:11:00:00 +0000] \"TCP /a.opus\" 200 1 \"-\" \"-\" 3600",
        "10.0.0.2 0000000a-2 - [02/Dec/2026:10:30:00 +0000] \"GET /a.opus HTTP/1.1\" 200 1 \"-\" \"VLC\" 900",
        "10.0.0.2 0000000a-2 - [02/Dec/2026:10:45:00 +0000] \"GET /b.mp3 HTTP/1.1\" 200 1 \"-\" \"VLC\" 900",
        "10.0.0.3 0000000a-3 - [02/Dec/2026:10:10:00 +0000] \"GET /a.opus HTTP/1.1\" 200 1 \"-\" \"curl\" 2",
        "10.0.0.4 0000000a-4 - [02/Dec/2026:12:00:00 +0000] \"GET /a.opus HTTP/1.1\" 200 1 \"-\" \"radio-relay/1.4\" 7200",
        "10.0.0.5 0000000a-5 - [02/Dec/2026:12:00:00 +0000] \"GET /a/events HTTP/1.1\" 200 1 \"-\" \"Chrome\" 7200",
        "# radio-relay: 3 access log lines dropped before 02/Dec/2026:11:00:00 +0000 (run 0000000a, 3 so far)",
        "10.0.0.6 0000000a-6 - [02/Dec/2026:25:00:00 +0000] \"GET /a.opus HTTP/1.1\" 200 1 \"-\" \"x\" 1",
    ]

    static func outcome(_ format: ReportCommand.Format, stations: [String: String] = [:]) throws
        -> ReportCommand.Outcome
    {
        let path = temporaryPath("report.log")
        try Data((log.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var command = ReportCommand()
        command.format = format
        command.options.stations = stations
        command.files = [path]
        var outcome = command.outcome()
        outcome.output = outcome.output.replacingOccurrences(of: path, with: "LOG")
        outcome.errors = outcome.errors.map { $0.replacingOccurrences(of: path, with: "LOG") }
        return outcome
    }

    @Test func theTextReport() throws {
        let outcome = try Self.outcome(.text)
        #expect(outcome.status == .ok && outcome.errors.isEmpty)
        let lines = outcome.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            lines.prefix(8) == [
                "radio-relay listening report: 1 file, 8 lines, 02/Dec/2026:10:00:00 +0000 to 02/Dec/2026:11:00:00 +0000",
                "sessions of 5 s or more; a listener ID is a session: one moved between mounts counts once in the "
                    + "total, its time on each mount",
                "",
                "mount    sessions   unique  listening h     median       mean     peak  peak at",
                "/a.opus         2        2         1.25    0:15:00    0:37:30        2  02/Dec/2026:10:15:00 +0000",
                "/b.mp3          1        1         0.25    0:15:00    0:15:00        1  02/Dec/2026:10:30:00 +0000",
                "(total)         2        2         1.50    0:30:00    0:45:00        2  02/Dec/2026:10:15:00 +0000",
                "",
            ])
        #expect(lines.contains("  10         1.50  ########################################"))
        #expect(lines.contains("  /a.opus  |          @             |"))
        #expect(
            lines.suffix(5) == [
                "left out: 1 probe (sessions under 5 s), 1 relay edge (user agent radio-relay/…), 1 title-event "
                    + "subscriber, 0 other answers (status not 2xx)",
                "duplicates: 0 lines already read from another file, counted once",
                "unreadable: 1 line (LOG:8: no such date)",
                "missing: 3 sessions: the server dropped their lines (its access log's markers)",
                "",
            ])
    }

    @Test func csvAndJSONHoldTheSameFigures() throws {
        let csv = try Self.outcome(.csv, stations: ["/a.opus": "a", "/b.mp3": "a"])
        let rows = csv.output.split(separator: "\r\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        #expect(rows.count == 3 && rows.allSatisfy { $0.count == ListeningReport.csvColumns.count })
        #expect(rows[0].map(String.init) == ListeningReport.csvColumns)
        // One station: the moved listener is one session there.
        #expect(
            rows[1].prefix(12).joined(separator: ",")
                == "a,/a.opus /b.mp3,2,2,5400,1.50,1800,2700.0,2,2026-12-02T10:15:00Z,1,1")
        #expect(rows[2].suffix(5).joined(separator: ",") == "1,0,0,1,3" && rows[1].suffix(5).allSatisfy(\.isEmpty))
        #expect(rows[2][12 + 10] == "5400" && rows[2][0] == "(total)")
        #expect(csv.errors == ["1 unreadable lines (LOG:8: no such date)"])

        let json = try Self.outcome(.json)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let total = try #require(object["total"] as? [String: Any])
        #expect(total["sessions"] as? Int == 2 && total["listening_seconds"] as? Int == 5_400)
        #expect(total["peak_at"] as? String == "2026-12-02T10:15:00Z" && total["mean_seconds"] as? Double == 2_700)
        #expect((total["hour_seconds"] as? [Int])?[10] == 5_400)
        #expect(object["missing_sessions"] as? Int == 3 && object["unreadable"] as? Int == 1)
        let groups = try #require(object["groups"] as? [[String: Any]])
        #expect(groups.map { $0["name"] as? String } == ["/a.opus", "/b.mp3"])
        #expect(object["left_out"] as? [String: Int] == ["probes": 1, "edges": 1, "title_events": 1, "not_2xx": 0])
    }

    @Test func aFileThatCannotBeReadMeansNoReport() {
        var command = ReportCommand()
        command.files = ["/nonexistent-\(UUID().uuidString).log"]
        let outcome = command.outcome()
        #expect(outcome.status == .noInput && outcome.output.isEmpty)
        #expect(outcome.errors.count == 2 && outcome.errors[0].contains("No such file or directory"))
    }
}
