import CCurl
import Dispatch
import RadioRelaySystem
import Synchronization

/// The calls to listener authentication backends (`listener_add`, `listener_remove`), made off the network loops
/// on one thread of their own through libcurl's multi interface: a slow or dead backend never holds a loop, and its
/// calls are bounded.
///
/// - At most `Limits.inFlight` calls at once; the adds waiting for a place are queued (at most `Limits.queued`, and
///   `Limits.perAddress` from one address), the removes behind them (at most `Limits.removes`).
/// - Each add has a deadline, `auth_timeout` from when it was asked: queued or in flight, it is answered `failed` by
///   then (`auth_failure` decides what that means), so nobody waits longer, and a backend that comes back is simply
///   called again for the next listener.
/// - Every remove is sent once; at the stop, the removes still queued or in flight get until `Limits.drain` seconds
///   after the stop was asked, and those left are counted as not sent (`AuthCounters.removesUnsent`).
/// - An answer's headers are bounded (`ResponseHeaders`), its body is read up to `Limits.bodyBytes` and dropped.
package final class Authenticator: Service {
    package struct Limits: Sendable, Equatable {
        package var inFlight = 64
        package var queued = 4096
        package var perAddress = 64
        package var removes = 16_384
        package var drain = 2.0
        package var bodyBytes = 64 * 1024

        package init() {}
    }

    package let name = "auth"
    package let limits: Limits
    package let counters = AuthCounters()
    /// Behind a pthread mutex (`LockedBox`), which ThreadSanitizer sees.
    private let state: LockedBox<Queues>
    /// libcurl and the thread, made at the first call: a server with no protected station never pays for them
    /// (libcurl's global set-up with its TLS library is about 2 MB of a server's 25 MB at rest).
    private let engine = LockedBox(Engine())
    private let onUnexpectedExit: @Sendable (String, (any Error)?) -> Void
    /// htpasswd checks, one at a time, and how many are queued.
    private let hashing = DispatchQueue(label: "radio-relay.htpasswd")
    private let hashQueued = Atomic<Int>(0)

    /// What waits, shared with the threads that ask.
    private struct Queues {
        var adds: [AuthJob] = []
        var removes: [AuthJob] = []
        var waitingByAddress: [HostKey: Int] = [:]
        var stopping = false
    }

    /// The multi handle and the thread that drives it, once launched.
    private struct Engine {
        /// `start` was called: the first call may launch the thread.
        var started = false
        /// Launched, or tried and failed (then never tried again: libcurl failing to start does not mend itself).
        var launched = false
        var stopped = false
        var handle: MultiHandle?
        var worker: ServiceThread?
    }

    package init(
        limits: Limits = Limits(),
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void = ServiceThread.terminateProcess
    ) {
        self.limits = limits
        self.onUnexpectedExit = onUnexpectedExit
        state = LockedBox(Queues())
    }

    deinit {
        if let multi = engine.snapshot.handle?.pointer { curl_multi_cleanup(multi) }
    }

    /// The multi handle of the running thread, launching both at the first call after `start`; nil before `start`,
    /// after `stop`, or when libcurl or the thread could not start.
    private func launched() -> UnsafeMutableRawPointer? {
        engine.withLock { engine in
            if engine.launched { return engine.worker?.isRunning == true ? engine.handle?.pointer : nil }
            guard engine.started else { return nil }
            engine.launched = true
            guard CurlTransfer.globalInit == CURLE_OK, let multi = curl_multi_init() else {
                Log.error("auth: libcurl could not start a multi handle: no listener can be authenticated by URL")
                return nil
            }
            let handle = MultiHandle(pointer: multi)
            let worker = ServiceThread(name: name, onUnexpectedExit: onUnexpectedExit) { [self] thread in
                var loop = AuthLoop(authenticator: self, multi: handle.pointer, limits: limits)
                loop.run(thread)
            }
            engine.handle = handle
            do {
                try worker.start()
            } catch {
                Log.error("auth: its thread could not start: \(error)")
                return nil
            }
            engine.worker = worker
            return multi
        }
    }

    // MARK: Asking

    /// Asks the backend about a listener; `done` gets the verdict (on the authenticator's thread) within `timeout`
    /// seconds. Returns why it cannot even be asked (too many waiting, from this address or in all), without calling
    /// `done`.
    package func add(
        _ call: AuthCall, url: SecretURL, header: AuthHeader, timeout: Double, from host: HostKey,
        done: @escaping @Sendable (AuthVerdict) -> Void
    ) -> String? {
        guard let multi = launched() else {
            counters.overCap.add(1, ordering: .relaxed)
            return engine.snapshot.started ? "authentication unavailable" : "authentication is not running"
        }
        let now = monotonicNow()
        let job = AuthJob(
            call: call, url: url, header: header, timeout: timeout, deadline: now + timeout, host: host, done: done)
        let refusal: String? = state.withLock { queues in
            if queues.stopping { return "authentication is not running" }
            if queues.adds.count >= limits.queued { return "too many listeners awaiting authentication" }
            let waiting = queues.waitingByAddress[host, default: 0]
            if waiting >= limits.perAddress { return "too many listeners awaiting authentication from this address" }
            queues.waitingByAddress[host] = waiting + 1
            queues.adds.append(job)
            return nil
        }
        if refusal != nil {
            counters.overCap.add(1, ordering: .relaxed)
            return refusal
        }
        counters.waiting.add(1, ordering: .relaxed)
        curl_multi_wakeup(multi)
        return nil
    }

    /// Tells the backend a listener left (once: `ListenerSession` sees to that). Not sent, and counted, when too
    /// many are queued or the authenticator has stopped.
    package func remove(_ call: AuthCall, url: SecretURL, timeout: Double) {
        let job = AuthJob(
            call: call, url: url, header: .icecast, timeout: timeout, deadline: monotonicNow() + timeout, host: nil,
            done: nil)
        let multi = launched()
        let queued = state.withLock { queues in
            guard multi != nil, queues.removes.count < limits.removes else { return false }
            queues.removes.append(job)
            return true
        }
        guard queued, let multi else {
            counters.removesUnsent.add(1, ordering: .relaxed)
            return
        }
        curl_multi_wakeup(multi)
    }

    /// Checks `credentials` against an htpasswd file on the hashing queue (one hash at a time: a bcrypt of high
    /// cost takes a quarter of a second, never on a network loop); `done` gets `admitted` or `refused`, or `failed`
    /// when its turn came after `timeout`. Returns why it cannot even be queued.
    package func check(
        _ credentials: ListenerCredentials, in file: HtpasswdFile, timeout: Double,
        done: @escaping @Sendable (AuthVerdict) -> Void
    ) -> String? {
        guard hashQueued.add(1, ordering: .relaxed).newValue <= limits.queued else {
            hashQueued.subtract(1, ordering: .relaxed)
            counters.overCap.add(1, ordering: .relaxed)
            return "too many listeners awaiting authentication"
        }
        let deadline = monotonicNow() + timeout
        hashing.async { [self] in
            defer { hashQueued.subtract(1, ordering: .relaxed) }
            let verdict: AuthVerdict =
                monotonicNow() > deadline
                ? .failed("timed out waiting for its turn")
                : file.verifies(credentials) ? .admitted(timeLimit: nil) : .refused(message: nil)
            counters.count(verdict)
            done(verdict)
        }
        return nil
    }

    // MARK: Service

    /// Lets the first call launch the thread (`launched`): nothing runs until a protected station has a listener.
    package func start() throws {
        engine.withLock { $0.started = true }
    }

    /// Heartbeat of its thread; empty until the first call.
    package var heartbeats: [Int] { engine.snapshot.worker.map { [$0.heartbeat.load(ordering: .relaxed)] } ?? [] }

    /// Asks the thread to finish what is due (the removes, within `Limits.drain`) and joins it; no call launches it
    /// again.
    @discardableResult
    package func stop(timeout: Double) -> Bool {
        state.withLock { $0.stopping = true }
        let (worker, multi) = engine.withLock { engine in
            // Stopping twice joins once; the worker stays, so the removes still come in while it drains.
            defer {
                engine.launched = true
                engine.stopped = true
            }
            return engine.stopped ? (nil, nil) : (engine.worker, engine.handle?.pointer)
        }
        guard let worker else { return true }
        worker.requestStop()
        if let multi { curl_multi_wakeup(multi) }
        return worker.stop(timeout: timeout)
    }

    // MARK: For the loop

    /// Takes up to `room` jobs, adds first (listeners are waiting); the adds past their deadline come back apart.
    func take(room: Int, now: Double) -> (start: [AuthJob], expired: [AuthJob], nextDeadline: Double?) {
        state.withLock { queues in
            var expired: [AuthJob] = []
            if queues.adds.contains(where: { $0.deadline <= now }) {
                expired = queues.adds.filter { $0.deadline <= now }
                queues.adds.removeAll { $0.deadline <= now }
            }
            var start = Array(queues.adds.prefix(room))
            queues.adds.removeFirst(start.count)
            let left = room - start.count
            if left > 0 {
                start += queues.removes.prefix(left)
                queues.removes.removeFirst(min(left, queues.removes.count))
            }
            // The adds are queued in the order they came, each with the same timeout as a rule: the first is the
            // earliest (a station's reload may change it: then this is a little late, never early).
            return (start, expired, queues.adds.first?.deadline)
        }
    }

    /// An add is answered: its address waits for one fewer.
    func answered(_ job: AuthJob, _ verdict: AuthVerdict) {
        if let host = job.host {
            state.withLock { queues in
                let left = queues.waitingByAddress[host, default: 1] - 1
                queues.waitingByAddress[host] = left > 0 ? left : nil
            }
        }
        counters.waiting.subtract(1, ordering: .relaxed)
        counters.count(verdict)
        job.done?(verdict)
    }

    /// Whatever is still queued at the end: adds answered `failed`, removes counted as not sent.
    func abandonQueued() {
        let (adds, removes) = state.withLock { queues in
            defer {
                queues.adds = []
                queues.removes = []
            }
            return (queues.adds, queues.removes.count)
        }
        for job in adds { answered(job, .failed("server stopping")) }
        counters.removesUnsent.add(removes, ordering: .relaxed)
    }

    var queuedCount: Int { state.withLock { $0.adds.count + $0.removes.count } }
}

/// The multi handle: used by the authenticator's thread alone, but for `curl_multi_wakeup`, which libcurl lets any
/// thread call.
struct MultiHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}

/// One queued or running call.
struct AuthJob: Sendable {
    let call: AuthCall
    let url: SecretURL
    let header: AuthHeader
    let timeout: Double
    let deadline: Double
    /// An add's address (its waiting place); nil for a remove.
    let host: HostKey?
    /// An add's answer; nil for a remove.
    let done: (@Sendable (AuthVerdict) -> Void)?
}
