import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// A mount's time-shifted listeners (`?start=`, `?offset=`): HTTP listeners that the front end admitted as far as
/// its part goes (their route, their authentication) and handed here instead of to a network loop. They are served
/// from the mount's archive files on a thread of this service's own, which does their disk reads and their writes,
/// so that a slow or hung disk holds no network loop, no live listener and no stream clock; like the archive's
/// writer, the thread is not among the watchdog's heartbeats.
///
/// Each listener takes its places through the server's admission point as any listener (the rules, the access
/// list, `max_listeners`, `max_per_ip`, the open-files budget) and, on top, one of this mount's readers: at most
/// `maxReaders` in all and `maxReadersPerAddress` per address. A reader costs two descriptors (its socket and the
/// file it reads), up to `TimeShiftListener.readAhead` bytes read ahead and as many queued for its socket, and the
/// disk's reads at its bit rate: 256 of them read about 4 MB/s at 128 kbit/s.
package final class TimeShiftService: Sendable {
    package static let maxReaders = 256
    package static let maxReadersPerAddress = 8
    /// Seconds without a byte taken by a listener's socket, with bytes waiting for it, after which it is dropped as
    /// too slow: its path is dead (a blackhole, a peer gone without a word) or it stopped reading (a player paused
    /// or stopped with SIGSTOP). Long, as a player's own buffer may be full for a while.
    package static let stuckAfter = 30.0
    /// Listeners handed over and not yet taken by the thread, at most.
    static let maxArrivals = 128

    /// One handed-over listener, where it starts, and how its front end words an answer; or a request for the
    /// archive HLS segment that starts at `segment`, answered and closed.
    struct Arrival {
        let listener: ArrivingListener
        let start: TimeShiftStart
        let answer: Answer
        var segment: (start: Int64, container: ArchivePlaylist.Container)?
    }

    /// An answer's bytes, as its front end makes them: status, content type (empty: plain text), body, fields.
    package typealias Answer = @Sendable (Int, String, [UInt8], [(String, String)]) -> [UInt8]

    package let broadcaster: Broadcaster
    /// The mount's archive folder, its format, and its index as the writer publishes it.
    package let directory: String
    package let format: ArchiveName.Format
    package let index: @Sendable () -> ArchiveIndex
    /// The titles the archive holds (`ArchiveTitles`), as the writer publishes them.
    package let titles: @Sendable () -> ArchiveTitles
    let arrivals = LockedBox<[Arrival]>([])
    let kicks = LockedBox<[ListenerID]>([])
    /// The IDs of the listeners it serves (a `killclient` asks here).
    let serving = LockedBox<Set<ListenerID>>([])
    let wake: EventFD
    private let thread = LockedBox<ServiceThread?>(nil)
    package let counters = TimeShiftCounters()
    /// This service's `stuckAfter` (shorter in tests).
    let stuckAfter: Double

    package init(
        broadcaster: Broadcaster, directory: String, format: ArchiveName.Format,
        index: @escaping @Sendable () -> ArchiveIndex, titles: @escaping @Sendable () -> ArchiveTitles,
        stuckAfter: Double = TimeShiftService.stuckAfter
    ) throws {
        self.stuckAfter = stuckAfter
        self.broadcaster = broadcaster
        self.directory = directory
        self.format = format
        self.index = index
        self.titles = titles
        wake = try EventFD()
    }

    package func start() throws {
        let made = ServiceThread(name: "shift-\(broadcaster.station)") { [self] thread in
            let loop = TimeShiftLoop(self)
            loop.run(in: thread)
        }
        try made.start()
        thread.withLock { $0 = made }
    }

    /// Stops the thread (its listeners closed); false when it did not end within `timeout` (a hung disk read).
    @discardableResult
    package func stop(timeout: Double = 10) -> Bool {
        guard let running = thread.take() else { return true }
        running.requestStop()
        try? wake.signal()
        let stopped = running.stop(timeout: timeout)
        for arrival in takeArrivals() { arrival.listener.session?.end(.notServed) }
        return stopped
    }

    /// Takes a listener (from the front end's thread): false when too many wait already, or the service does not
    /// run (the caller answers 503).
    package func handOver(
        _ listener: ArrivingListener, from start: TimeShiftStart, answer: @escaping Answer,
        segment: (start: Int64, container: ArchivePlaylist.Container)? = nil
    ) -> Bool {
        guard thread.withLock({ $0 != nil }) else { return false }
        let taken = arrivals.withLock { waiting -> Bool in
            guard waiting.count < Self.maxArrivals else { return false }
            waiting.append(Arrival(listener: listener, start: start, answer: answer, segment: segment))
            return true
        }
        if taken { try? wake.signal() }
        return taken
    }

    /// The listeners handed over since the last call (the service's thread).
    func takeArrivals() -> [Arrival] {
        arrivals.withLock { waiting in
            defer { waiting = [] }
            return waiting
        }
    }

    /// The `killclient`s asked for since the last call (the service's thread).
    func takeKicks() -> [ListenerID] {
        kicks.withLock { asked in
            defer { asked = [] }
            return asked
        }
    }

    /// Closes the listener with this ID if it is one of this service's (an admin's `killclient`).
    package func kick(_ id: ListenerID) -> Bool {
        guard serving.withLock({ $0.contains(id) }) else { return false }
        kicks.withLock { $0.append(id) }
        try? wake.signal()
        return true
    }
}

/// What a mount's time-shifted listeners cost, for the status and the metrics.
package final class TimeShiftCounters: Sendable {
    package let listeners = Atomic<Int>(0)
    package let served = Atomic<Int>(0)
    package let refused = Atomic<Int>(0)
    package let bytesRead = Atomic<Int>(0)
    package let bytesSent = Atomic<Int>(0)
}
