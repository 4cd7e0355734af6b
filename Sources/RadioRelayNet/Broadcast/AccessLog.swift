import Glibc
import RadioRelaySystem
import Synchronization

/// One listener's visit, as the access log writes it when the listener leaves.
package struct AccessRecord: Sendable, Equatable {
    /// The listener's address (the PROXY header's client behind a balancer).
    package var host: String
    /// When it left (wall-clock seconds).
    package var time: Double
    /// What it asked for (nil: a raw TCP listener, which sent no request).
    package var request: ListenerRequest?
    package var status = 200
    /// Bytes of the stream it was sent (the response head not counted).
    package var bytes: Int
    package var seconds: Double

    package init(
        host: String, time: Double, request: ListenerRequest?, status: Int = 200, bytes: Int, seconds: Double
    ) {
        self.host = host
        self.time = time
        self.request = request
        self.status = status
        self.bytes = bytes
        self.seconds = seconds
    }
}

/// The access log (`access_log = FILE`): one line per listener when it leaves, in the combined format Icecast
/// writes, so that log analysers read it as they read Icecast's:
///
///     127.0.0.1 - - [02/Dec/2026:16:03:08 +0000] "GET /jazz.mp3 HTTP/1.1" 200 482133 "-" "VLC/3.0.18" 30
///
/// (address, user, time, request, status, bytes, referrer, user agent, seconds connected). Every URL in it is
/// redacted (the request line carries no query; referrer and user agent pass `Redaction`), quotes and backslashes in
/// a field are escaped. A network loop only queues the line; a writer thread of its own appends it to the file, so a
/// slow disk never holds a listener up (`LogQueue`: bounded, lines beyond it dropped and counted in the log). A
/// reload (SIGHUP) opens the file again, for logrotate.
package final class AccessLog: Sendable {
    /// The process's access log: off until `open`.
    package static let shared = AccessLog()

    private let file = File()
    private let openPath = LockedBox<String?>(nil)
    private let enabled = Atomic<Bool>(false)
    private let queue: LogQueue

    package init(capacity: Int = 10_000) {
        let file = self.file
        queue = LogQueue(
            capacity: capacity,
            format: { entries, lost in
                if lost > 0 { Log.warning("access log: \(lost) lines dropped (the file could not keep up)") }
                return entries.map { $0.message + "\n" }.joined()
            },
            sink: { text in file.append(text) })
        // Without its thread (none could start), lines are written by `flush` only.
        _ = queue.startWriter()
    }

    /// Whether lines are written (a file is open).
    package var isOpen: Bool { enabled.load(ordering: .relaxed) }

    /// The file's path, when one is open.
    package var path: String? { openPath.snapshot }

    /// Opens (or creates, mode 0640) `path` for appending; lines go there from now on. It never waits for a write
    /// in progress (a reload on the main thread, whose watchdog pings must go on while a disk stalls): the writer
    /// takes the new file before its next batch and closes the old one.
    package func open(path newPath: String) throws {
        let fd = try syscall("open \(newPath)") {
            Glibc.open(newPath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        }
        file.replace(with: fd)
        openPath.withLock { $0 = newPath }
        enabled.store(true, ordering: .relaxed)
    }

    /// Opens the same path again (after logrotate moved the file); a failure keeps the old file and is logged.
    package func reopen() {
        guard let current = openPath.snapshot else { return }
        do {
            try open(path: current)
        } catch {
            Log.error("access log: \(error); lines go on to the file that was open")
        }
    }

    /// Stops writing (tests).
    package func close() {
        enabled.store(false, ordering: .relaxed)
        queue.flush()
        file.replace(with: -1)
        file.install()
        openPath.withLock { $0 = nil }
    }

    /// Queues the line for `record` (nothing when no file is open).
    package func write(_ record: AccessRecord) {
        guard isOpen else { return }
        queue.enqueue(LogQueue.Entry(priority: .info, message: Self.line(record), time: timespec()))
    }

    /// Writes what is queued now (tests, and before the process exits).
    package func flush() { queue.flush() }

    /// The record's line in the combined format, without its newline.
    package static func line(_ record: AccessRecord) -> String {
        let request = record.request
        let seconds = record.seconds.isFinite ? Int(max(0, min(record.seconds, 1e12)).rounded(.down)) : 0
        return "\(record.host) - - [\(UTCTime(record.time).commonLogDate)] \(quoted(request?.line)) \(record.status) "
            + "\(max(0, record.bytes)) \(quoted(request?.referrer)) \(quoted(request?.userAgent)) \(seconds)"
    }

    /// A field in quotes, `"-"` when absent, with `"` and `\` escaped as Apache does.
    static func quoted(_ value: String?) -> String {
        guard let value, !value.isEmpty else { return "\"-\"" }
        var out = "\""
        for scalar in Sanitized.text(value, limit: 1024).unicodeScalars {
            if scalar == "\"" || scalar == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(scalar)
        }
        return out + "\""
    }

    /// The open file's descriptor (-1: none), written under its lock by the writer (or `flush`); a new one waits in
    /// `pending` (a lock never held during I/O) until the writer installs it and closes the old one.
    private final class File: Sendable {
        private let descriptor = LockedBox<Int32>(-1)
        private let pending = LockedBox<Int32?>(nil)
        private let failures = Atomic<Int>(0)

        /// Hands `fd` to the writer (-1: none); a descriptor handed earlier and not yet taken is closed.
        func replace(with fd: Int32) {
            let old = pending.withLock { waiting in
                defer { waiting = fd }
                return waiting
            }
            if let old, old >= 0 { _ = Glibc.close(old) }
        }

        /// Takes the descriptor handed over, if any, and closes the one it replaces.
        func install() {
            descriptor.withLock { fd in install(into: &fd) }
        }

        private func install(into fd: inout Int32) {
            guard let next = pending.take() else { return }
            if fd >= 0 { _ = Glibc.close(fd) }
            fd = next
        }

        /// Writes `text` whole; a failure drops it and is logged once per 100.
        func append(_ text: String) {
            descriptor.withLock { fd in
                install(into: &fd)
                guard fd >= 0 else { return }
                var bytes = Array(text.utf8)[...]
                while !bytes.isEmpty {
                    let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else {
                        let count = failures.add(1, ordering: .relaxed).newValue
                        if count % 100 == 1 {
                            Log.error("access log: write failed: \(String(cString: strerror(errno))) (\(count) so far)")
                        }
                        return
                    }
                    bytes = bytes.dropFirst(written)
                }
            }
        }
    }
}
