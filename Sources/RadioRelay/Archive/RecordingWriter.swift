import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// A station's recorder of live shows (`record_live = DIR`): while a live source is on the air, the main output's
/// pages (what the listeners hear) and, with `record_live_source`, the source's own bytes are handed over by the
/// pipeline thread through a bounded `DiskQueue` and written on a thread of its own (`RecordingSession`), so that a
/// slow, full or failing disk never delays the pipeline. What does not fit is dropped and counted.
package final class RecordingWriter: Sendable {
    /// What the pipeline hands over.
    enum Item {
        /// A source took over: a show starts.
        case begin(RecordingShow)
        /// One of the main output's pages while the show is on.
        case page(ArchivePage)
        /// The show's audio is over (the hand-back's tail included).
        case end
        /// Bytes the live source sent, as it sent them (`record_live_source`).
        case source([UInt8])
        /// The source's connection closed.
        case sourceEnd
        /// `dropped` items did not fit in the queue before the next one.
        case gap(dropped: Int)
    }

    /// About 7 minutes of 100 ms pages; 8 MiB.
    static let maxItems = 4096
    static let maxBytes = 8 << 20

    /// The station's folder of recordings (`DIR/<station>`).
    package let directory: String
    let label: String
    let queue: DiskQueue<Item>
    package let counters = RecordingCounters()
    package let status = LockedBox(RecordingStatus())

    /// Makes `directory` and checks that it can be written (a configuration error otherwise, so that the station
    /// does not start); the thread starts with `start`.
    package init(directory: String, label: String) throws {
        do {
            try ArchiveDisk.prepare(directory)
        } catch {
            throw ConfigurationError(
                "\(label): record_live: the directory \(directory) cannot be written (\(error)): "
                    + "make it writable for the server's user, or change record_live")
        }
        self.directory = directory
        self.label = label
        queue = try DiskQueue(maxItems: Self.maxItems, maxBytes: Self.maxBytes, prefix: "\(label): record_live") {
            .gap(dropped: $0)
        }
    }

    package func start() throws {
        try queue.start(name: "rec-\(label)") { [self] thread in
            var session = RecordingSession(self)
            session.run(in: thread)
        }
    }

    /// Stops the thread once it has written what is queued (the current files finished and synced); false when it
    /// did not end within `timeout`.
    @discardableResult
    package func stop(timeout: Double = 10) -> Bool { queue.stop(timeout: timeout) }

    /// A show starts (from the pipeline thread): never waits.
    func begin(_ show: RecordingShow) {
        enqueue([.begin(show)], bytes: show.headers.reduce(0) { $0 + $1.count })
    }

    /// The main output's pages published during the show: never waits.
    func offer(_ pages: [OggPage], wall: Double) {
        guard !pages.isEmpty else { return }
        enqueue(pages.map { .page(ArchivePage($0, wall: wall)) }, bytes: pages.reduce(0) { $0 + $1.bytes.count })
    }

    func end() { enqueue([.end], bytes: 0) }

    /// Bytes of the live source's connection, as they came: never waits.
    func offer(source bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        enqueue([.source(bytes)], bytes: bytes.count)
    }

    func sourceEnded() { enqueue([.sourceEnd], bytes: 0) }

    private func enqueue(_ items: [Item], bytes: Int) {
        if !queue.enqueue(items, bytes: bytes) { counters.dropped.add(items.count, ordering: .relaxed) }
    }
}

/// A show as the pipeline starts it: its name (already safe for a file name), when it took over, the main output's
/// granule before its first page and the header pages of the link that plays.
struct RecordingShow {
    let name: String
    /// Unix seconds.
    let wall: Double
    let base: Int64
    let headers: [[UInt8]]
    /// `record_live_max` when it started.
    let maxSeconds: Int
}

/// The recorder's counters, read by the status and the metrics.
package final class RecordingCounters: Sendable {
    /// Recordings finished, and copies of sources' bytes.
    package let files = Atomic<Int>(0)
    package let sourceFiles = Atomic<Int>(0)
    package let bytesWritten = Atomic<Int>(0)
    /// Pages (and pieces of the source's bytes) that were not recorded: the queue was full or the disk failed.
    package let dropped = Atomic<Int>(0)
    package let writeErrors = Atomic<Int>(0)
}

/// What the recorder reports (the status's `recordings` object).
package struct RecordingStatus: Sendable, Equatable {
    package enum State: String, Sendable {
        case idle, recording, failing, stopped
    }

    package var state = State.idle
    /// The recording being written, and the source's copy beside it.
    package var current: String?
    package var currentSource: String?
    /// The last recording finished.
    package var last: String?
    package var lastError: String?
}
