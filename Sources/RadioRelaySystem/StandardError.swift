import Glibc

/// Plain text to standard error: the one writer behind `Log`, the command line's own messages (usage errors,
/// transcode progress and summary) and the tools'.
package enum StandardError {
    /// Writes all of `text`, retrying interrupted and partial writes; gives up silently when stderr is gone.
    package static func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(STDERR_FILENO, base + offset, buffer.count - offset)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
        }
    }
}
