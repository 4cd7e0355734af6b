import Foundation
import Glibc

/// Log lines to stderr, one call one line. Under systemd (JOURNAL_STREAM set) each line carries a `<N>` syslog
/// priority prefix, which journald reads as the entry's priority; on a terminal each line carries a time instead.
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
    /// Lines written so far, behind the lock that keeps lines from different threads whole.
    private static let written = LockedBox(0)
    /// Lines below this priority are dropped (set once at start-up).
    nonisolated(unsafe) package static var threshold: Priority = .info

    package static func error(_ message: @autoclosure () -> String) { write(.error, message()) }
    package static func warning(_ message: @autoclosure () -> String) { write(.warning, message()) }
    package static func notice(_ message: @autoclosure () -> String) { write(.notice, message()) }
    package static func info(_ message: @autoclosure () -> String) { write(.info, message()) }
    package static func debug(_ message: @autoclosure () -> String) {
        if threshold.rawValue >= Priority.debug.rawValue { write(.debug, message()) }
    }

    package static func write(_ priority: Priority, _ message: String) {
        guard priority.rawValue <= threshold.rawValue else { return }
        let line: String
        if underJournal {
            line = "<\(priority.rawValue)>\(message)\n"
        } else {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            var parts = tm()
            var seconds = now.tv_sec
            localtime_r(&seconds, &parts)
            let stamp = String(
                format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec,
                Int(now.tv_nsec / 1_000_000))
            let label = ["", "", "", "error: ", "warning: ", "", "", "debug: "][Int(priority.rawValue)]
            line = "\(stamp) \(label)\(message)\n"
        }
        written.withLock { count in
            count += 1
            StandardError.write(line)
        }
    }
}
