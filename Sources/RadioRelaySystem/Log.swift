import CLinux
import Foundation
import Glibc
import Synchronization

/// Log lines to stderr, one call one line. Under systemd (JOURNAL_STREAM set) each line carries a `<N>` syslog
/// priority prefix, which journald reads as the entry's priority; on a terminal each line carries a time instead.
///
/// A call never waits for stderr: the line goes into a bounded queue (`LogQueue`, 8 192 lines) that a writer
/// thread of its own drains. When stderr is so slow that the queue fills, lines are dropped and counted, and the
/// next line that gets out says how many. At `exit` the writer is given at most `exitWait` seconds for what is
/// queued; a journal whose pipe stays full cannot hold the process longer. A line below `threshold` costs
/// one comparison: its text is not even built. Callers that can repeat a line many times at a peer's will (the
/// network loops' refusals, moves, drops, connects, leaves and subscriptions; a pipeline's format changes and stage
/// errors) limit themselves with a `LogRateLimit`.
package enum Log {
    /// syslog priorities (sd-daemon(3)'s `<N>` prefixes).
    package enum Priority: Int32, Sendable {
        case error = 3
        case warning = 4
        case notice = 5
        case info = 6
        case debug = 7
    }

    private static let underJournal = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
    /// Lines below this priority are dropped. Set at start-up and by a reload (on the main thread) while every other
    /// thread reads it: an atomic, not a plain static.
    package static var threshold: Priority {
        get { Priority(rawValue: level.load(ordering: .relaxed)) ?? .info }
        set { level.store(newValue.rawValue, ordering: .relaxed) }
    }
    private static let level = Atomic<Int32>(Priority.info.rawValue)

    /// The queue and its writer, started at the first line; nil when the writer thread could not start (then each
    /// line is written by its caller, as before).
    private static let queue: LogQueue? = {
        let journal = underJournal
        let queue = LogQueue(
            capacity: 8192, format: { entries, dropped in format(entries, dropped: dropped, journal: journal) },
            sink: { bytes, wait in BoundedOutput.write(STDERR_FILENO, bytes, wait: wait) })
        guard queue.startWriter() else { return nil }
        atexit { Log.flush() }
        return queue
    }()

    /// Seconds the exit waits at most for queued lines to reach stderr.
    package static let exitWait = 1.0

    package static func error(_ message: @autoclosure () -> String) { write(.error, message) }
    package static func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    package static func notice(_ message: @autoclosure () -> String) { write(.notice, message) }
    package static func info(_ message: @autoclosure () -> String) { write(.info, message) }
    package static func debug(_ message: @autoclosure () -> String) { write(.debug, message) }

    /// Whether a line of this priority would be written.
    package static func isEnabled(_ priority: Priority) -> Bool { priority.rawValue <= threshold.rawValue }

    package static func write(_ priority: Priority, _ message: String) { write(priority) { message } }

    private static func write(_ priority: Priority, _ message: () -> String) {
        guard isEnabled(priority) else { return }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        // The last guard for secrets: whatever a caller formatted, a URL in the line loses its userinfo and query values.
        let entry = LogQueue.Entry(priority: priority, message: Redaction.text(message()), time: now)
        if let queue {
            queue.enqueue(entry)
        } else {
            StandardError.write(format([entry], dropped: 0, journal: underJournal), timeout: exitWait)
        }
    }

    /// Waits at most `timeout` seconds for what is queued to reach stderr (at exit, and for tests); returns how
    /// many lines did not.
    @discardableResult
    package static func flush(timeout: Double = exitWait) -> Int { queue?.flush(timeout: timeout) ?? 0 }

    /// The text of a batch of lines, preceded by a note when lines were dropped before it.
    package static func format(_ entries: [LogQueue.Entry], dropped: Int, journal: Bool) -> String {
        var text = ""
        if dropped > 0 {
            let note = "log: \(dropped) lines dropped: stderr was too slow"
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            text += line(LogQueue.Entry(priority: .warning, message: note, time: now), journal: journal)
        }
        for entry in entries { text += line(entry, journal: journal) }
        return text
    }

    package static func line(_ entry: LogQueue.Entry, journal: Bool) -> String {
        if journal { return "<\(entry.priority.rawValue)>\(entry.message)\n" }
        var parts = tm()
        var seconds = entry.time.tv_sec
        localtime_r(&seconds, &parts)
        let stamp = String(
            format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec,
            Int(entry.time.tv_nsec / 1_000_000))
        let label = ["", "", "", "error: ", "warning: ", "", "", "debug: "][Int(entry.priority.rawValue)]
        return "\(stamp) \(label)\(entry.message)\n"
    }
}
