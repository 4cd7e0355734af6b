import Glibc
import RadioRelaySystem
import Synchronization

/// One listener's visit, as the access log writes it when the listener leaves.
package struct AccessRecord: Sendable, Equatable {
    /// The listener's address (the PROXY header's client behind a balancer).
    package var host: String
    /// When it left (wall-clock seconds).
    package var time: Double
    /// Its ID (written with this run's token, `ListenerID.run`), when it was admitted.
    package var id: ListenerID?
    /// The mount it listened to: the line's request for a raw TCP listener, which sent none.
    package var mount: String
    /// What it asked for (nil: a raw TCP listener, which sent no request).
    package var request: ListenerRequest?
    package var status = 200
    /// Bytes of the stream it was sent (the response head not counted).
    package var bytes: Int
    package var seconds: Double

    package init(
        host: String, time: Double, id: ListenerID? = nil, mount: String = "-", request: ListenerRequest?,
        status: Int = 200, bytes: Int, seconds: Double
    ) {
        self.host = host
        self.time = time
        self.id = id
        self.mount = mount
        self.request = request
        self.status = status
        self.bytes = bytes
        self.seconds = seconds
    }
}

extension AccessRecord {
    /// The line of an admitted listener that leaves now (wall clock): its address, ID and mount as its roster entry
    /// has them.
    package init(leaving entry: ListenerEntry, request: ListenerRequest?, bytes: Int, seconds: Double) {
        self.init(
            host: entry.address, time: wallClockNow(), id: entry.id, mount: entry.mount, request: request, bytes: bytes,
            seconds: seconds)
    }
}

/// The access log (`access_log = FILE`): one line per listener when it leaves, in the combined format Icecast
/// writes, so that log analysers read it as they read Icecast's:
///
///     127.0.0.1 5f3a09c1-42 - [02/Dec/2026:16:03:08 +0000] "GET /jazz.mp3 HTTP/1.1" 200 482133 "-" "VLC/3.0.18" 30
///
/// (address, the listener's ID after the run's token — `ListenerID` — in the identity field, user, time, request,
/// status, bytes, referrer, user agent, seconds connected). A raw TCP listener sent no request: its line's request is
/// `"TCP /MOUNT"`, the mount it was served. An HLS player's session has one line when it ends (`HLSSessions`), its
/// request the playlist's. Every URL in it is
/// redacted (the request line carries no query; referrer and user agent pass `Redaction`), quotes and backslashes in
/// a field are escaped.
///
/// Nothing here ever waits for the file: a network loop only queues the line (`LogQueue`: bounded, lines beyond it
/// dropped and counted, and a marker line — `# radio-relay: 12 access log lines dropped before …`, `droppedMarker` —
/// written where they would have been, with those lost while no file was open or to a failed write); the queue's own
/// writer thread opens the file (`open`, and `reopen` after logrotate), and writes it through a descriptor with
/// `O_NONBLOCK`, waiting in slices, so that a FIFO whose reader stalled or a hung disk holds that thread only. A FIFO without a reader fails to open at once (`ENXIO`), which is logged; the next
/// reload tries again. `stop` waits a bounded time and counts what it could not write.
package final class AccessLog: Sendable {
    private let file = FileBox()
    private let openPath = LockedBox<String?>(nil)
    private let enabled = Atomic<Bool>(false)
    private let queue: LogQueue

    package init(capacity: Int = 10_000) {
        let file = self.file
        queue = LogQueue(
            capacity: capacity,
            format: { entries, lost in
                if lost > 0 { Log.warning("access log: \(lost) lines dropped (the file could not keep up)") }
                let marker = file.marker(dropped: lost).map { $0 + "\n" } ?? ""
                return marker + entries.map { $0.message + "\n" }.joined()
            },
            sink: { bytes, wait in
                file.descriptor < 0 ? .failed(errno: EBADF) : BoundedOutput.write(file.descriptor, bytes, wait: wait)
            },
            onFailure: { lines, code in file.failed(lines: lines, errno: code) })
    }

    /// Whether lines are queued (a file was asked for; it may not be open yet).
    package var isOpen: Bool { enabled.load(ordering: .relaxed) }

    /// Whether a file is open now (the writer opened it).
    package var isWritable: Bool { file.isWritable }

    /// The file's path, when one was asked for.
    package var path: String? { openPath.snapshot }

    /// Opens (or creates, mode 0640) `path` for appending, on the writer thread: lines go there from the next batch
    /// on. Returns at once; the outcome is logged ("access log: PATH", or why it cannot be opened) and, until a file
    /// is open, lines are counted and dropped.
    package func open(path newPath: String) {
        // The writer starts with the first file (a server without an access log has no such thread); without it
        // (none could start), lines and opens are carried out by `flush` only.
        if !queue.writerIsRunning { _ = queue.startWriter() }
        openPath.withLock { $0 = newPath }
        enabled.store(true, ordering: .relaxed)
        let file = self.file
        queue.perform { file.open(newPath) }
    }

    /// Opens the same path again (after logrotate moved the file; a reader of a FIFO that came back); a failure
    /// keeps the file that was open and is logged.
    package func reopen() {
        guard let current = openPath.snapshot else { return }
        open(path: current)
    }

    /// Waits at most `timeout` seconds for what is queued to be written; returns how many lines were not.
    @discardableResult
    package func flush(timeout: Double = 1) -> Int { queue.flush(timeout: timeout) }

    /// Stops the log: what is queued gets at most `timeout` seconds, the rest is dropped and counted (logged with
    /// the lines failed writes lost); the file is closed. Returns the lines not written.
    @discardableResult
    package func stop(timeout: Double = 1) -> Int {
        guard enabled.exchange(false, ordering: .relaxed) else { return 0 }
        let unwritten = queue.stop(timeout: timeout)
        // The writer is gone (or stuck in a write the kernel holds: then its descriptor is left to the exit).
        let lost = queue.writerIsRunning ? 0 : file.finish()
        if unwritten > 0 || lost > 0 {
            let parts = [
                unwritten > 0
                    ? "\(unwritten) lines not written at the stop (\(path ?? "the file") did not take them within "
                        + "\(wholeSeconds(timeout)) s)" : nil,
                lost > 0 ? "\(lost) lines lost to failed writes" : nil,
            ].compactMap { $0 }
            Log.warning("access log: " + parts.joined(separator: "; "))
        }
        openPath.withLock { $0 = nil }
        return unwritten
    }

    /// Queues the line for `record` (nothing when no file was asked for; counted while none could be opened).
    package func write(_ record: AccessRecord) {
        guard isOpen else { return }
        guard file.isWritable else {
            file.unopened.add(1, ordering: .relaxed)
            return
        }
        queue.enqueue(LogQueue.Entry(priority: .info, message: Self.line(record), time: timespec()))
    }

    /// The record's line in the combined format, without its newline.
    package static func line(_ record: AccessRecord) -> String {
        let request = record.request
        let seconds = record.seconds.isFinite ? Int(max(0, min(record.seconds, 1e12)).rounded(.down)) : 0
        let identity = record.id.map { "\(ListenerID.run)-\($0)" } ?? "-"
        let line = request?.line ?? "TCP \(Sanitized.text(record.mount, limit: 512))"
        return "\(record.host) \(identity) - [\(UTCTime(record.time).commonLogDate)] \(quoted(line)) \(record.status) "
            + "\(max(0, record.bytes)) \(quoted(request?.referrer)) \(quoted(request?.userAgent)) \(seconds)"
    }

    /// How a marker line starts: `# radio-relay: 12 access log lines dropped before 02/Dec/2026:16:03:08 +0000 (run
    /// 5f3a09c1, 40 so far)`. Log analysers skip `#` lines; `radio-relay report` sums the counts, so that sessions
    /// the file lacks are reported as missing, never silently left out.
    package static let markerPrefix = "# radio-relay: "

    /// The marker line for `count` lines lost before `time` (wall clock), `total` the count of every marker of this
    /// run so far (which also makes each marker line unique, so that a report's dedup of overlapping files keeps
    /// each one).
    package static func droppedMarker(count: Int, time: Double, total: Int) -> String {
        "\(markerPrefix)\(count) access log line\(count == 1 ? "" : "s") dropped before "
            + "\(UTCTime(time).commonLogDate) (run \(ListenerID.run), \(total) so far)"
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

    /// The open file, confined to the writer thread (it alone opens, writes and closes it); whether one is open is
    /// also published for the loops that queue lines.
    private final class FileBox: @unchecked Sendable {
        /// Read and written by the writer thread only.
        private(set) var descriptor: Int32 = -1
        private var failures = 0
        private var lastFailureReport = -Double.infinity
        private var unreported = 0
        private let writable = Atomic<Bool>(false)
        /// Lines not queued because no file was open, since the last report (any thread adds).
        let unopened = Atomic<Int>(0)
        /// Lines lost that no marker line has counted yet: dropped while no file was open, or lost to failed writes
        /// (writer thread only, as the three below).
        private var unannounced = 0
        /// The count of the marker at the head of the batch being written (lost with it when the write fails).
        private var batchMarker = 0
        /// What the markers of this run counted so far.
        private var announced = 0

        var isWritable: Bool { writable.load(ordering: .relaxed) }

        /// Opens `path` (`O_NONBLOCK`: a FIFO without a reader fails at once instead of waiting for one); the old
        /// file is closed once the new one is open, and kept when it cannot be.
        func open(_ path: String) {
            let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o640)
            guard fd >= 0 else {
                let code = errno
                let reason = code == ENXIO ? " (a FIFO that no process reads)" : ""
                let keeps = descriptor >= 0 ? "lines go on to the file that was open" : "lines are dropped"
                Log.error(
                    "access log: cannot open \(path): \(String(cString: strerror(code)))\(reason); \(keeps) until "
                        + "a reload (SIGHUP) opens it")
                return
            }
            if descriptor >= 0 { _ = Glibc.close(descriptor) }
            let first = !writable.load(ordering: .relaxed)
            descriptor = fd
            failures = 0
            writable.store(true, ordering: .relaxed)
            let lost = unopened.exchange(0, ordering: .relaxed)
            unannounced = unannounced.saturatingAdding(lost)
            if first {
                Log.notice(
                    "access log: \(path) (a line per listener when it leaves)"
                        + (lost > 0 ? "; \(lost) lines were dropped while it could not be opened" : ""))
            } else {
                Log.info("access log: \(path) opened again")
            }
        }

        /// The marker line for the next batch: the queue's `dropped` lines and those lost since the last marker
        /// (`AccessLog.droppedMarker`), nil when none were. Called as each batch is formatted, on the writer.
        func marker(dropped: Int) -> String? {
            let count = unannounced.saturatingAdding(max(0, dropped))
            unannounced = 0
            batchMarker = count
            guard count > 0 else { return nil }
            announced = announced.saturatingAdding(count)
            return AccessLog.droppedMarker(count: count, time: wallClockNow(), total: announced)
        }

        /// Closes the file once the writer is gone; returns the lines failed writes lost since the last report.
        func finish() -> Int {
            writable.store(false, ordering: .relaxed)
            if descriptor >= 0 { _ = Glibc.close(descriptor) }
            descriptor = -1
            defer { unreported = 0 }
            return unreported
        }

        /// A write failed (a FIFO's reader gone, a full disk): the batch's lines are lost. Logged the first time,
        /// then at most once a minute with a count.
        func failed(lines: Int, errno code: Int32) {
            failures += 1
            unreported += lines
            // The next marker counts them, and the count of the marker this batch carried.
            unannounced = unannounced.saturatingAdding(max(0, lines)).saturatingAdding(batchMarker)
            batchMarker = 0
            let now = monotonicNow()
            guard failures == 1 || now - lastFailureReport >= 60 else { return }
            lastFailureReport = now
            Log.error(
                "access log: write failed: \(String(cString: strerror(code))); \(unreported) lines lost "
                    + "(\(failures) failed writes so far)")
            unreported = 0
        }
    }
}
