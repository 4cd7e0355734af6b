import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// One push of a station's stream to an Icecast mount, on its own thread (`push-NAME`), so that nothing Icecast or
/// the network does can hold up the pipeline or the network loop: the push only reads the station's page ring, as a
/// listener would, and a push that fails or falls behind costs the station's own listeners nothing.
///
/// The thread (`PushLoop`) connects (`IcecastUpload`), sends the header pages and then the pages `PushCursor` picks,
/// and on any failure drops the connection and tries again after `ReconnectSchedule`'s delay (decorrelated jitter,
/// growing to the station's `reconnect_max`). Each connection starts cleanly with the header pages.
package final class IcecastPush: Sendable {
    let settings: PushSettings
    private let shared: LockedBox<PushStatus>
    private let thread: ServiceThread

    init(
        _ settings: PushSettings, ring: PageRing,
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void = ServiceThread.terminateProcess
    ) {
        self.settings = settings
        let shared = LockedBox(PushStatus(target: settings.target.description))
        self.shared = shared
        thread = ServiceThread(name: "push-\(settings.station)", onUnexpectedExit: onUnexpectedExit) { thread in
            PushLoop(settings, ring: ring, status: shared).run(in: thread)
        }
    }

    /// The push's state now.
    package var status: PushStatus { shared.snapshot }
    /// The thread's heartbeat, for the watchdog.
    var heartbeat: Int { thread.heartbeat.load(ordering: .relaxed) }

    func start() throws { try thread.start() }

    /// Stops the thread and closes the connection (Icecast then ends the source); false if it outlived `timeout`.
    @discardableResult
    func stop(timeout: Double) -> Bool { thread.stop(timeout: timeout) }
}

/// The push thread's loop: confined to that thread.
final class PushLoop {
    /// The longest wait in one iteration (ms): how late a published page may be noticed, and how soon a stop is.
    static let pollTimeout = 20
    /// Pages queued on a connection at most; past them the push waits, and if Icecast does not catch up it falls
    /// behind and its connection is given up.
    static let queueLimit = 64

    private let settings: PushSettings
    private let ring: PageRing
    private let status: LockedBox<PushStatus>
    private var upload: IcecastUpload?
    private var accepted = false
    private var cursor: PushCursor
    private var snapshot = RingSnapshot()
    private var snapshotHead: Int64 = -1
    private var reconnect: ReconnectSchedule
    /// One line per kind of failure, then a count: a target that is down for an hour leaves a line a minute.
    private var failureLog = LogRateLimit<PushFailure.Kind>(limit: 1, window: 60)
    /// Every connection is logged, up to 5 a minute (a connection that is accepted and then fails at once).
    private var connectLog = LogRateLimit<Bool>(limit: 5, window: 60)
    /// Failures since the last accepted connection, and when the first of them happened.
    private var outage: (failures: Int, since: Double)?
    /// Bytes sent by the connections before this one.
    private var earlierBytes = 0

    init(_ settings: PushSettings, ring: PageRing, status: LockedBox<PushStatus>) {
        self.settings = settings
        self.ring = ring
        self.status = status
        cursor = PushCursor(maxLag: settings.maxLag)
        reconnect = ReconnectSchedule(delays: settings.reconnectDelay)
    }

    func run(in thread: ServiceThread) {
        while !thread.isStopping {
            thread.beat()
            let now = monotonicNow()
            reportSuppressed(now: now)
            guard let upload = upload ?? connect(now: now) else {
                usleep(UInt32(Self.pollTimeout * 1000))
                continue
            }
            do throws(PushFailure) {
                try forward(to: upload)
                if try upload.poll(timeout: Self.pollTimeout), !accepted { accept(now: now) }
                let sent = earlierBytes + upload.bytesSent
                status.withLock { $0.bytesSent = sent }
            } catch {
                fail(error, now: monotonicNow())
            }
        }
        upload = nil  // closes the connection
    }

    private func connect(now: Double) -> IcecastUpload? {
        guard reconnect.isDue(now: now) else { return nil }
        do throws(PushFailure) {
            let connection = try IcecastUpload(
                target: settings.target, headers: settings.iceHeaders, connectTimeout: settings.connectTimeout,
                caFile: settings.caFile, peerTimeout: settings.peerTimeout)
            upload = connection
            accepted = false
            cursor.restart()
            status.withLock { $0.state = .connecting }
            return connection
        } catch {
            fail(error, now: now)
            return nil
        }
    }

    /// Queues what the cursor picks from the ring: on a new connection the header pages first.
    private func forward(to upload: IcecastUpload) throws(PushFailure) {
        let head = ring.nextIndex
        if head != snapshotHead {
            snapshot.refresh(from: ring)
            snapshotHead = head
        }
        switch cursor.step(snapshot, room: Self.queueLimit - upload.queuedPages) {
        case .wait:
            break
        case .start(let from, let end):
            try upload.send(ring.headers)
            try upload.send((from..<end).compactMap { snapshot.page($0) })
        case .send(let from, let end):
            try upload.send((from..<end).compactMap { snapshot.page($0) })
        case .behind(.overtaken):
            throw PushFailure(
                .behind, "fell behind the station's page ring (Icecast does not take the stream at real time)")
        case .behind(.seconds(let seconds)):
            throw PushFailure(
                .behind,
                "fell \(Int(min(seconds, 86_400))) s behind the station (more than \(settings.maxLag) s: Icecast does "
                    + "not take the stream at real time)")
        }
    }

    private func accept(now: Double) {
        accepted = true
        reconnect.connected(now: now)
        status.withLock { $0.state = .connected }
        var line = "\(settings.station): pushing to \(settings.target)"
        if let outage {
            line += " again, after \(outage.failures) failed attempts in \(Int(min(now - outage.since, 1e9))) s"
        }
        outage = nil
        switch connectLog.admit(true, now: now) {
        case .write: Log.notice(line)
        case .writeAfter(let suppressed): Log.notice("\(line) (\(suppressed) more connections since the last line)")
        case .suppress: break
        }
    }

    private func fail(_ failure: PushFailure, now: Double) {
        earlierBytes += upload?.bytesSent ?? 0
        upload = nil
        accepted = false
        let wait = reconnect.failed(now: now, random: Double.random(in: 0..<1))
        outage = (failures: (outage?.failures ?? 0) + 1, since: outage?.since ?? now)
        status.withLock {
            $0.state = .retrying
            $0.lastError = failure.message
            $0.reconnects += 1
            $0.bytesSent = earlierBytes
        }
        let line =
            "\(settings.station): push to \(settings.target) failed: \(failure.message); retrying in "
            + "\((wait * 10).rounded() / 10) s"
        switch failureLog.admit(failure.kind, now: now) {
        case .write: Log.warning(line)
        case .writeAfter(let suppressed):
            Log.warning("\(line) (\(suppressed) more failures like it since the last line)")
        case .suppress: break
        }
    }

    /// The counts of lines left out, once their minute is over.
    private func reportSuppressed(now: Double) {
        while let (kind, count) = failureLog.summary(now: now) {
            Log.warning("\(settings.station): push to \(settings.target): \(count) more failures (\(kind)) in a minute")
        }
        while let (_, count) = connectLog.summary(now: now) {
            Log.notice("\(settings.station): push to \(settings.target) connected \(count) more times in a minute")
        }
    }
}

@available(*, unavailable) extension PushLoop: Sendable {}
