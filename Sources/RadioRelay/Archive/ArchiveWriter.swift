import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// A station's archive writer: the pages (MP3 frames) of one output, handed over by the pipeline thread through a
/// bounded queue and written to files on a thread of its own (`ArchiveSession`), so that a slow, full or failing
/// disk never delays the pipeline, the listeners or the stream clock. `offer` takes a lock for an array append and
/// signals an eventfd; when the queue holds `maxItems` items or `maxBytes` bytes, what comes is dropped from the
/// archive and counted, and the writer is told of the gap before the next item it gets (it ends its file there, so
/// the index shows the gap).
///
/// The writer's thread is not among the station's heartbeats: a disk that hangs a `write` must not make the
/// watchdog end the server. Its figures (`counters`, `status`) are read by the status and the metrics.
package final class ArchiveWriter: Sendable {
    /// What the pipeline hands over.
    enum Item {
        /// A link's header pages (OpusHead, OpusTags), the ones the next pages belong to.
        case headers([[UInt8]])
        case page(ArchivePage)
        /// A run of whole MP3 frames, published at `wall` (Unix seconds).
        case frames([UInt8], wall: Double)
        /// `dropped` items did not fit in the queue before the next one.
        case gap(dropped: Int)
        /// The station's title changed (kept in `titles.txt` beside the files).
        case title(ArchiveTitles.Entry)
    }

    /// About 7 minutes of 100 ms pages; 8 MiB.
    static let maxItems = 4096
    static let maxBytes = 8 << 20

    /// The station's folder of files (`DIR/<station>`, and `mp3/` in it for an MP3 output).
    package let directory: String
    package let format: ArchiveName.Format
    let label: String
    let span: Int
    package let keep: LockedBox<ArchiveKeep>
    package let counters = ArchiveCounters()
    package let status = LockedBox(ArchiveStatus())
    let queue: DiskQueue<Item>

    /// Makes `directory` and checks that it can be written (a configuration error otherwise, so that the station
    /// does not start); the thread starts with `start`.
    package init(directory: String, format: ArchiveName.Format, settings: ArchiveSettings, label: String) throws {
        do {
            try ArchiveDisk.prepare(directory)
        } catch {
            throw ConfigurationError(
                "\(label): archive: the directory \(directory) cannot be written (\(error)): "
                    + "make it writable for the server's user, or change archive")
        }
        self.directory = directory
        self.format = format
        self.label = label
        span = settings.span
        keep = LockedBox(settings.keep)
        queue = try DiskQueue(maxItems: Self.maxItems, maxBytes: Self.maxBytes, prefix: "\(label): archive") {
            .gap(dropped: $0)
        }
    }

    package func start() throws {
        try queue.start(name: "arch-\(label)") { [self] thread in
            var session = ArchiveSession(self)
            session.run(in: thread)
        }
    }

    /// Stops the thread once it has written what is queued (the current file finished and synced); false when it
    /// did not end within `timeout` (a hung disk: it is left to end by itself).
    @discardableResult
    package func stop(timeout: Double = 10) -> Bool { queue.stop(timeout: timeout) }

    /// Queues the pages an output published (from the pipeline thread): never waits.
    package func offer(_ pages: [OggPage], wall: Double) {
        guard !pages.isEmpty else { return }
        enqueue(pages.map { .page(ArchivePage($0, wall: wall)) }, bytes: pages.reduce(0) { $0 + $1.bytes.count })
    }

    /// Queues a run of MP3 frames (from the pipeline thread): never waits.
    package func offer(_ chunk: MP3PassThrough.Chunk, wall: Double) {
        enqueue([.frames(chunk.bytes, wall: wall)], bytes: chunk.bytes.count)
    }

    /// Queues a title change (from the pipeline thread): never waits.
    package func offer(title: ArchiveTitles.Entry) {
        enqueue([.title(title)], bytes: title.title.utf8.count)
    }

    /// Queues the header pages the next pages belong to (at the start, before any page).
    package func offer(headers: [[UInt8]]) {
        enqueue([.headers(headers)], bytes: headers.reduce(0) { $0 + $1.count })
    }

    private func enqueue(_ items: [Item], bytes: Int) {
        if !queue.enqueue(items, bytes: bytes) { counters.pagesDropped.add(items.count, ordering: .relaxed) }
    }

    /// Items waiting for the writer.
    package var queued: Int { queue.count }
}

/// One Ogg page as the archive needs it: its bytes and flags, and when it was published.
struct ArchivePage {
    let bytes: [UInt8]
    let granule: Int64
    let isHeader: Bool
    let isBeginning: Bool
    let isContinued: Bool
    /// Unix seconds.
    let wall: Double

    init(_ page: OggPage, wall: Double) {
        bytes = page.bytes
        granule = page.granulePosition
        isHeader = page.isHeader
        isBeginning = page.isBeginning
        isContinued = page.isContinued
        self.wall = wall
    }
}

/// The writer's counters, read by the metrics.
package final class ArchiveCounters: Sendable {
    package let bytesWritten = Atomic<Int>(0)
    package let pagesDropped = Atomic<Int>(0)
    package let writeErrors = Atomic<Int>(0)
    package let filesRemoved = Atomic<Int>(0)
}

/// What the writer reports of its archive (the status's `archive` object).
package struct ArchiveStatus: Sendable, Equatable {
    package enum State: String, Sendable {
        case starting, writing, failing, stopped
    }

    package var state = State.starting
    package var files = 0
    package var bytes: Int64 = 0
    /// The oldest file's start and the newest audio's end (ms since the epoch); nil with no file.
    package var oldest: Int64?
    package var newest: Int64?
    package var current: String?
    /// The last failure, as the log said it.
    package var lastError: String?
    /// The index of the finished files (and the current one so far), for readers.
    package var index = ArchiveIndex()
    /// The titles of what the files hold.
    package var titles = ArchiveTitles()
}
