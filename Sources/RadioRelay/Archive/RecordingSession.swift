import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The recorder's thread and its state, confined to it. A show's pages go to a file of their own, named by the
/// show's start and name, made a stream of its own by an `ArchiveOggFile` as an archive file is (its link's header
/// pages, granules from 0, the last page flagged end-of-stream); a show longer than `record_live_max`, a new Ogg
/// link or a gap in the queue goes on in a new file, named by the second its first page came. The source's own bytes
/// (`record_live_source`) are copied as they came into a file beside the first recording of its connection, from the
/// connection's first byte (an Ogg source's header pages included) to its last. A finished file is `fsync`ed, and
/// its folder; one a crash left open is ended at the next start (`RecordingSession+Recovery.swift`).
///
/// A failure (ENOSPC, EROFS, EIO) is logged once, the file is cut back to its last whole page and closed, and pages
/// are dropped (counted) until a new file can be opened, tried every `ArchiveSettings.retryInterval`.
struct RecordingSession {
    let writer: RecordingWriter
    var show: RecordingShow?
    var file: ArchiveOpenFile?
    /// The incoming granule the open file starts after (its samples are the page's granule less it).
    var fileBase: Int64 = 0
    /// The current link's header pages.
    var headers: [[UInt8]] = []
    /// The incoming stream's granule after the last page seen; nil when unknown (after a gap).
    var lastGranule: Int64?
    /// Whether the show's first file is still to come (it is named by the takeover's time).
    var startsShow = false
    var source = SourceCopy()
    var trouble: DiskTrouble

    /// The copy of the source's bytes: the file it goes to, or what came before a show started; `broken` after a
    /// loss (a gap, a failed write): nothing more of that connection is copied.
    struct SourceCopy {
        var file: ArchiveOpenFile?
        var pending: [UInt8] = []
        var broken = false
        /// Bytes kept before a show starts: a source takes over within seconds of its first bytes.
        static let maxPending = 4 << 20
    }

    init(_ writer: RecordingWriter) {
        self.writer = writer
        trouble = DiskTrouble(prefix: "\(writer.label): record_live")
    }

    var label: String { writer.label }

    mutating func run(in thread: ServiceThread) {
        recover()
        publish()
        var nextLook = 0.0
        while !thread.isStopping {
            thread.beat()
            writer.queue.wait(milliseconds: 1000)
            handle(writer.queue.take())
            let now = monotonicNow()
            if now >= nextLook {
                nextLook = now + 1
                trouble.summarize()
                publish()
            }
        }
        handle(writer.queue.take())
        finishFile()
        closeSource()
        show = nil
        publish(stopped: true)
    }

    mutating func handle(_ items: [RecordingWriter.Item]) {
        for item in items {
            switch item {
            case .begin(let next):
                finishFile()
                show = next
                headers = next.headers
                lastGranule = next.base
                startsShow = true
                Log.notice("\(label): record_live: show \(next.name) is on the air: recording")
            case .page(let page):
                handle(page)
            case .end:
                finishFile()
                show = nil
            case .source(let bytes):
                copySource(bytes)
            case .sourceEnd:
                closeSource()
                source = SourceCopy()
            case .gap(let dropped):
                finishFile()
                lastGranule = nil
                if source.file != nil || !source.pending.isEmpty { breakSource("bytes were dropped") }
                trouble.note("queue", "the disk fell behind: \(dropped) pages dropped from the show")
            }
        }
        publish()
    }

    mutating func handle(_ page: ArchivePage) {
        guard let show else { return }
        if page.isHeader {
            if page.isBeginning {
                finishFile()
                headers = []
                lastGranule = 0
            }
            headers.append(page.bytes)
            return
        }
        if file != nil, let held = lastGranule.map({ $0 - fileBase }),
            RecordingSettings.splits(held, page.isContinued, max: show.maxSeconds)
        {
            finishFile()
        }
        defer { if page.granule >= 0 { lastGranule = page.granule } }
        if file == nil {
            guard let base = lastGranule, !page.isContinued, !headers.isEmpty else { return }
            guard let ogg = ArchiveOggFile(headers: headers, base: base) else {
                trouble.note("headers", "the stream's header pages are not Opus headers")
                return
            }
            let start = ArchiveSession.millis(startsShow ? show.wall : page.wall)
            guard trouble.mayOpen(), open(start: start, show: show.name, ogg: ogg) else {
                drop()
                return
            }
            fileBase = base
            startsShow = false
            write(ogg.headerBytes)
            if source.file == nil, !source.pending.isEmpty, let name = file?.name { openSource(beside: name) }
        }
        guard let bytes = file?.carry(page.bytes) else { return drop() }
        write(bytes)
    }

    /// A page not recorded: a file that starts after it is named by its own first page, not by the takeover.
    mutating func drop() {
        writer.counters.dropped.add(1, ordering: .relaxed)
        trouble.dropped(1)
        startsShow = false
    }

    /// The status the station shows.
    func publish(stopped: Bool = false) {
        writer.status.withLock { status in
            status.state =
                stopped ? .stopped : trouble.failure != nil ? .failing : file != nil || show != nil ? .recording : .idle
            status.current = file?.name
            status.currentSource = source.file?.name
            status.lastError = trouble.failure?.message
        }
    }
}

extension RecordingSettings {
    /// `splits` for a show that started with `record_live_max` = `max`.
    static func splits(_ samples: Int64, _ continued: Bool, max: Int) -> Bool {
        var settings = RecordingSettings()
        settings.maxSeconds = max
        return settings.splits(samples: samples, continued: continued)
    }
}
