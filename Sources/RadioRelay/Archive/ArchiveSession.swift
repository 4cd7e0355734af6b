import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The archive writer's thread and its state, confined to it: it takes what the pipeline queued, writes each page
/// (frame) to the file of its span, starts a new file at the first page after a boundary of the UTC clock (or
/// after a gap, or at a new Ogg link), finishes a file with its last page flagged end-of-stream, `fsync`s it and
/// records it in the index, and removes the files beyond `archive_keep`.
///
/// A failure (ENOSPC, EROFS, EIO, a volume nearly full) is logged once, the file is cut back to its last whole page
/// and closed, and pages are dropped (counted) until a new file can be opened, tried every
/// `ArchiveSettings.retryInterval`; a line says when the archive writes again and how many pages it lost.
struct ArchiveSession {
    let writer: ArchiveWriter
    let settings: ArchiveSettings
    var index = ArchiveIndex()
    var file: ArchiveOpenFile?
    /// The current link's header pages (Ogg).
    var headers: [[UInt8]] = []
    /// The incoming stream's granule after the last page seen; nil when unknown (at the start, after a gap).
    var lastGranule: Int64?
    /// The span start the next file is named by, after a rotation at a boundary.
    var nextStart: Int64?
    var failure: Failure?
    var nextHousekeeping = 0.0
    var logLimit = LogRateLimit<String>(limit: 1, window: 60)
    /// The titles of the archive (`titles.txt`).
    var titles = ArchiveTitles()

    /// A failure the writer waits out: what the log said, when to try again, pages dropped since.
    struct Failure {
        var message: String
        var retryAt: Double
        var dropped: Int
    }

    init(_ writer: ArchiveWriter) {
        self.writer = writer
        var settings = ArchiveSettings()
        settings.span = writer.span
        self.settings = settings
    }

    var label: String { writer.label }

    mutating func run(in thread: ServiceThread) {
        recover()
        publish()
        while !thread.isStopping {
            thread.beat()
            var wait = pollfd(fd: writer.wake.rawValue, events: Int16(POLLIN), revents: 0)
            _ = poll(&wait, 1, 1000)
            _ = try? writer.wake.drain()
            handle(writer.take())
            let now = wallClockNow()
            if now >= nextHousekeeping {
                housekeeping(now: now)
                nextHousekeeping = now + 1
            }
        }
        handle(writer.take())
        finishFile()
        publish(stopped: true)
    }

    mutating func handle(_ items: [ArchiveWriter.Item]) {
        for item in items {
            switch item {
            case .headers(let pages):
                finishFile()
                headers = pages
                lastGranule = 0
            case .gap(let dropped):
                finishFile()
                lastGranule = nil
                nextStart = nil
                note("queue", "\(label): archive: the disk fell behind: \(dropped) pages dropped from the archive")
            case .page(let page):
                handle(page)
            case .frames(let bytes, let wall):
                handleFrames(bytes, at: Self.millis(wall))
            case .title(let entry):
                keepTitle(entry)
            }
        }
    }

    mutating func handle(_ page: ArchivePage) {
        if page.isHeader {
            if page.isBeginning {
                finishFile()
                headers = []
                lastGranule = 0
            }
            headers.append(page.bytes)
            return
        }
        let millis = Self.millis(page.wall)
        if let file, millis >= file.boundary, !page.isContinued {
            nextStart = settings.spanStart(of: millis)
            finishFile()
        }
        defer { if page.granule >= 0 { lastGranule = page.granule } }
        if file == nil {
            guard let base = lastGranule, !page.isContinued, !headers.isEmpty else { return }
            guard mayOpen() else {
                drop(1)
                return
            }
            guard let ogg = ArchiveOggFile(headers: headers, base: base) else {
                note("headers", "\(label): archive: the stream's header pages are not Opus headers: not archived")
                return
            }
            guard open(start: nextStart ?? millis, first: millis) else {
                drop(1)
                return
            }
            file?.ogg = ogg
            write(ogg.headerBytes)
        }
        guard let open = file, var ogg = open.ogg else {
            drop(1)
            return
        }
        let bytes = ogg.carry(page.bytes)
        open.ogg = ogg
        write(bytes, published: millis)
    }

    mutating func handleFrames(_ bytes: [UInt8], at millis: Int64) {
        if let file, millis >= file.boundary {
            nextStart = settings.spanStart(of: millis)
            finishFile()
        }
        if file == nil {
            guard mayOpen(), open(start: nextStart ?? millis, first: millis) else {
                drop(1)
                return
            }
        }
        write(bytes, published: millis)
    }

    /// Whether a new file may be tried now: always, unless a failure's retry time is still to come.
    func mayOpen() -> Bool {
        guard let failure else { return true }
        return wallClockNow() >= failure.retryAt
    }

    mutating func drop(_ count: Int) {
        writer.counters.pagesDropped.add(count, ordering: .relaxed)
        failure?.dropped += count
    }

    /// A line a storm could repeat: once a minute per topic.
    mutating func note(_ topic: String, _ line: String) {
        switch logLimit.admit(topic, now: monotonicNow()) {
        case .write: Log.warning(line)
        case .writeAfter(let suppressed): Log.warning("\(line) (and \(suppressed) more like it)")
        case .suppress: break
        }
    }

    static func millis(_ wall: Double) -> Int64 {
        guard wall.isFinite else { return 0 }
        return Int64((min(max(wall, 0), 253_402_300_799) * 1000).rounded(.down))
    }
}

/// The file being written, owned by the writer's thread: its descriptor (closed when it goes), where its span ends,
/// the scanner that indexes what was written, and its Ogg re-stamping.
final class ArchiveOpenFile {
    let descriptor: FileDescriptor
    let name: String
    let path: String
    let boundary: Int64
    var scanner: ArchiveScanner
    var ogg: ArchiveOggFile?

    init(descriptor: consuming FileDescriptor, name: String, path: String, boundary: Int64, scanner: ArchiveScanner) {
        self.descriptor = descriptor
        self.name = name
        self.path = path
        self.boundary = boundary
        self.scanner = scanner
    }
}
