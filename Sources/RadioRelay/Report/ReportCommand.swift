import RadioRelaySystem

/// `radio-relay report [--csv|--json] [--min-seconds N] [--station-of MOUNT=STATION]… ACCESS_LOG…`: reads access
/// logs — plain or gzip, rotated files in any order, overlapping or not — and prints a listening report
/// (`ListeningReport`) as a table, CSV or JSON. A file that cannot be opened or read ends it with status 66 and no
/// report (a report of part of the logs would mislead); lines that cannot be read are counted and reported.
package struct ReportCommand: Sendable {
    package enum Format: Sendable, Equatable {
        case text
        case csv
        case json
    }

    package var format = Format.text
    package var options = ListeningReport.Options()
    /// The access logs, in any order; `-` is standard input.
    package var files: [String] = []
    package var reader = AccessLogReader()
    package var limit = AccessLogTally.defaultLimit

    package init() {}

    /// What `run` prints: the report (standard output) and the notes for standard error; or, when a file could not
    /// be read, only the errors.
    package struct Outcome: Sendable {
        package var output: String
        package var errors: [String]
        package var status: ExitCode
    }

    /// Reads every file and makes the report.
    package func outcome() -> Outcome {
        var tally = AccessLogTally(limit: limit)
        var notes: [String] = []
        var failures: [String] = []
        for file in files {
            do {
                notes += try reader.read(file, into: &tally)
            } catch {
                failures.append(error.message)
            }
        }
        guard failures.isEmpty else {
            return Outcome(output: "", errors: failures + ["no report: every file must be read"], status: .noInput)
        }
        let sources = ReportSources(files: files, tally: tally, notes: notes)
        let lines = tally.lines
        let counts = tally.counts
        let examples = tally.examples
        tally = AccessLogTally(limit: 0)  // its keys against duplicates are done with: their memory goes back now
        let report = ListeningReport(lines: lines, options: options)
        switch format {
        case .text:
            return Outcome(output: report.text(sources), errors: [], status: .ok)
        case .json:
            return Outcome(output: report.json(sources), errors: [], status: .ok)
        case .csv:
            // The table holds the figures; what is not in it goes to standard error.
            var errors = notes
            if counts.unreadable > 0 {
                errors.append("\(counts.unreadable) unreadable lines (" + examples.joined(separator: "; ") + ")")
            }
            if counts.overLimit > 0 {
                errors.append("\(counts.overLimit) lines beyond the \(limit) a report keeps were not counted")
            }
            return Outcome(output: report.csv(sources), errors: errors, status: .ok)
        }
    }

    /// Runs the command: prints, and returns the exit status.
    package func run() -> Int32 {
        let outcome = outcome()
        if !outcome.output.isEmpty { print(outcome.output, terminator: "") }
        for error in outcome.errors {
            StandardError.write("radio-relay report: \(Sanitized.text(error, limit: 1000))\n")
        }
        return outcome.status.rawValue
    }
}
