import RadioRelayNet

/// One line of the access log (`AccessLog.line` writes it), read back for a listening report:
///
///     127.0.0.1 5f3a09c1-42 - [02/Dec/2026:16:03:08 +0000] "GET /jazz.mp3 HTTP/1.1" 200 482133 "-" "VLC/3.0.18" 30
///
/// Reading never traps and never trusts: every field is checked, numbers saturate instead of overflowing (bytes) or
/// are refused (a session longer than the time since 1970), quoted fields are at most `fieldLimit` bytes, and a line
/// that is not exactly the format is `unreadable` with the reason.
package struct AccessLogLine: Sendable, Equatable {
    package var address: String
    /// The run and ID of the identity field; nil for `-` (a writer without IDs).
    package var session: SessionKey?
    /// When the listener left: Unix seconds.
    package var leave: Int64
    /// The request line as written (unescaped): `GET /jazz.mp3 HTTP/1.1`, `TCP /jazz.opus`.
    package var request: String
    package var status: Int
    package var bytes: Int64
    package var userAgent: String
    /// Whole seconds connected; never more than `leave` (no session starts before 1970).
    package var seconds: Int64

    /// What a line of the file is.
    package enum Parsed: Sendable, Equatable {
        case listener(AccessLogLine)
        /// The server's marker of lines its access log dropped (`AccessLog.droppedMarker`): how many.
        case dropped(Int64)
        /// A `#` line of another kind, or an empty line: skipped, as log analysers skip them.
        case comment
        case unreadable(String)
    }

    /// The longest quoted field read, in bytes (the writer cuts each at 1 024 bytes before escaping).
    package static let fieldLimit = 4096

    package static func parse(_ line: ArraySlice<UInt8>) -> Parsed {
        var line = line
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard let first = line.first else { return .comment }
        if first == UInt8(ascii: "#") {
            return droppedCount(line).map { .dropped($0) } ?? .comment
        }
        var cursor = AccessLogCursor(bytes: line)
        return cursor.listener().map { .listener($0) } ?? .unreadable(cursor.failure)
    }

    /// The count of a marker line, `# radio-relay: N access log lines dropped …`; nil for any other line.
    static func droppedCount(_ line: ArraySlice<UInt8>) -> Int64? {
        let prefix = AccessLog.markerPrefix.utf8
        guard line.starts(with: prefix) else { return nil }
        var cursor = AccessLogCursor(bytes: line.dropFirst(prefix.count))
        guard let count = cursor.number(), cursor.take(" access log line") else { return nil }
        return count
    }
}

/// A listener's run and ID as the identity field writes them (`5f3a09c1-42`, `ListenerID`): one session of one
/// listener, whichever mounts it listened on.
package struct SessionKey: Hashable, Sendable {
    package var run: UInt32
    package var id: UInt64

    package init(run: UInt32, id: UInt64) {
        self.run = run
        self.id = id
    }
}
