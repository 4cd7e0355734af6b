import Glibc

/// Plain text to standard error: the one writer behind `Log`, the command line's own messages (usage errors,
/// transcode progress and summary) and the tools'.
///
/// It never waits longer than its timeout: a journal whose pipe is full, or a terminal on hold, loses the text
/// rather than holding the process (`BoundedOutput`), at exit too.
package enum StandardError {
    /// Writes all of `text` within `timeout` seconds; false when stderr failed or did not take it in time.
    @discardableResult
    package static func write(_ text: String, timeout: Double = 2) -> Bool {
        BoundedOutput.writeAll(STDERR_FILENO, Array(text.utf8), timeout: timeout)
    }
}
