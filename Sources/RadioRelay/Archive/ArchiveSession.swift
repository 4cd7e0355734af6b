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
    var trouble: DiskTrouble
    var nextHousekeeping = 0.0
    /// The titles of the archive (`titles.txt`).
    var titles = ArchiveTitles()

    init(_ writer: ArchiveWriter) {
        self.writer = writer
        var settings = ArchiveSettings()
        settings.span = writer.span
        self.settings = settings
        trouble = DiskTrouble(prefix: "\(writer.label): archive")
    }

    var label: String { writer.label }

    mutating func run(in thread: ServiceThread) {
        recover()
        publish()
        while !thread.isStopping {
            thread.beat()
            writer.queue.wait(milliseconds: 1000)
            handle(writer.queue.take())
            let now = wallClockNow()
            if now >= nextHousekeeping {
                housekeeping(now: now)
                nextHousekeeping = now + 1
            }
        }
        handle(writer.queue.take())
        finishFile()
        publish(stopped: true)
    }

    mutating func handle(_ items: [ArchiveWriter.Item]) {
        // On a slow disk a batch takes long: what it has written is published every second meanwhile, so that the
        // status and the time-shifted readers see the archive grow as it does.
        var published = monotonicNow()
        for (number, item) in items.enumerated() {
            if number > 0, monotonicNow() - published >= 1 {
                publish()
                published = monotonicNow()
            }
            switch item {
            case .headers(let pages):
                finishFile()
                headers = pages
                lastGranule = 0
            case .gap(let dropped):
                finishFile()
                lastGranule = nil
                nextStart = nil
                trouble.note("queue", "the disk fell behind: \(dropped) pages dropped from the archive")
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
            guard trouble.mayOpen() else {
                drop(1)
                return
            }
            guard let ogg = ArchiveOggFile(headers: headers, base: base) else {
                trouble.note("headers", "the stream's header pages are not Opus headers: not archived")
                return
            }
            guard open(start: nextStart ?? millis, first: millis) else {
                drop(1)
                return
            }
            file?.ogg = ogg
            write(ogg.headerBytes)
        }
        guard let bytes = file?.carry(page.bytes) else { return drop(1) }
        write(bytes, published: millis)
    }

    mutating func handleFrames(_ bytes: [UInt8], at millis: Int64) {
        if let file, millis >= file.boundary {
            nextStart = settings.spanStart(of: millis)
            finishFile()
        }
        if file == nil {
            guard trouble.mayOpen(), open(start: nextStart ?? millis, first: millis) else {
                drop(1)
                return
            }
        }
        write(bytes, published: millis)
    }

    mutating func drop(_ count: Int) {
        writer.counters.pagesDropped.add(count, ordering: .relaxed)
        trouble.dropped(count)
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

extension ArchiveOpenFile {
    /// Writes `bytes` and indexes them.
    func append(_ bytes: [UInt8]) throws(SystemError) {
        try ArchiveDisk.write(bytes, to: descriptor, path: path)
        scanner.feed(bytes)
    }

    /// The bytes to write for an Ogg file's next page (`ArchiveOggFile.carry`); nil for an MP3 file.
    func carry(_ page: [UInt8]) -> [UInt8]? {
        guard var file = ogg else { return nil }
        defer { ogg = file }
        return file.carry(page)
    }

    /// The held page that ends an Ogg file, flagged end-of-stream (nil for an MP3 file, or with no page held).
    func takeLastPage() -> [UInt8]? {
        guard var file = ogg else { return nil }
        let last = file.finish()
        ogg = file
        return last.isEmpty ? nil : last
    }

    /// After a failed write: the file cut back to its whole pages (frames), an Ogg file's last page flagged as the
    /// end (rewritten in place: no new space needed), and synced as far as the disk lets it.
    func cutBack() {
        _ = try? ArchiveDisk.truncate(path, to: scanner.validSize)
        if scanner.format == .opus {
            ArchiveSession.markEnd(path, page: scanner.lastUnitOffset, end: scanner.validSize)
        }
        _ = try? ArchiveDisk.sync(descriptor, path: path)
    }
}
