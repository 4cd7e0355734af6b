import CCurl
import RadioRelaySystem
import Synchronization

/// The authenticator's thread: starts the queued calls within the in-flight cap, runs them on one libcurl multi
/// handle, answers each add by its deadline, and at the stop drains the removes within `Authenticator.Limits.drain`.
struct AuthLoop {
    let authenticator: Authenticator
    let multi: UnsafeMutableRawPointer
    let limits: Authenticator.Limits
    /// The calls running, by easy handle.
    private var running: [UnsafeMutableRawPointer: AuthTransfer] = [:]
    /// A backend that fails fails for every listener: one line per kind per 10 s, then a count.
    private var logLimit = LogRateLimit<String>(limit: 5, window: 10)

    init(authenticator: Authenticator, multi: UnsafeMutableRawPointer, limits: Authenticator.Limits) {
        self.authenticator = authenticator
        self.multi = multi
        self.limits = limits
    }

    mutating func run(_ thread: ServiceThread) {
        var drainUntil: Double?
        while true {
            thread.beat()
            let now = monotonicNow()
            if thread.isStopping, drainUntil == nil { drainUntil = now + limits.drain }
            if let drainUntil, now >= drainUntil || (running.isEmpty && authenticator.queuedCount == 0) { break }
            let (start, expired, queuedDeadline) = authenticator.take(
                room: max(0, limits.inFlight - running.count), now: now)
            for job in expired { authenticator.answered(job, .failed("timed out waiting for its turn")) }
            for job in start { begin(job, now: now) }
            expireRunning(now: now)
            var active: Int32 = 0
            curl_multi_perform(multi, &active)
            collect()
            logSummaries(now: now)
            // Until the next deadline at most (a queued add's, a running call's bound), so none is answered late.
            let deadlines = running.values.map { $0.job.deadline + 0.5 } + (queuedDeadline.map { [$0] } ?? [])
            let wait = min(250, deadlines.map { Int(max(0, ($0 - now) * 1000)) + 1 }.min() ?? 250)
            curl_multi_poll(multi, nil, 0, Int32(clamping: max(1, wait)), nil)
        }
        for transfer in running.values { end(transfer, .failed("server stopping")) }
        running = [:]
        authenticator.abandonQueued()
    }

    /// Starts a call; one libcurl refuses is answered `failed` at once.
    private mutating func begin(_ job: AuthJob, now: Double) {
        do {
            let transfer = try AuthTransfer(job: job, remaining: job.deadline - now, bodyLimit: limits.bodyBytes)
            let code = curl_multi_add_handle(multi, transfer.easy)
            guard code == CURLM_OK else {
                throw AuthTransfer.Problem(String(cString: curl_multi_strerror(code)))
            }
            running[transfer.easy] = transfer
        } catch {
            finish(job, .failed("\(error)"))
        }
    }

    /// A call past its deadline (libcurl's own timeout is the same, this is the bound whatever it does).
    private mutating func expireRunning(now: Double) {
        for (easy, transfer) in running where transfer.job.deadline + 0.5 <= now {
            curl_multi_remove_handle(multi, easy)
            running[easy] = nil
            end(transfer, .failed("timed out after \(transfer.job.timeout) s"))
        }
    }

    /// The calls that finished.
    private mutating func collect() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = running.removeValue(forKey: easy)
            else { continue }
            let result = message.pointee.data.result
            curl_multi_remove_handle(multi, easy)
            end(transfer, transfer.verdict(result))
        }
    }

    private mutating func end(_ transfer: AuthTransfer, _ verdict: AuthVerdict) { finish(transfer.job, verdict) }

    private mutating func finish(_ job: AuthJob, _ verdict: AuthVerdict) {
        let remove = job.done == nil
        if case .failed(let why) = verdict {
            let action = remove ? "listener_remove" : "listener_add"
            log(action, "auth: \(action) for listener #\(job.call.client) to \(job.url) failed: \(why)")
        }
        guard remove else { return authenticator.answered(job, verdict) }
        if case .failed = verdict {
            authenticator.counters.removesFailed.add(1, ordering: .relaxed)
        } else {
            authenticator.counters.removesSent.add(1, ordering: .relaxed)
        }
    }

    private mutating func log(_ kind: String, _ message: String) {
        switch logLimit.admit(kind, now: monotonicNow()) {
        case .write: Log.warning(message)
        case .writeAfter(let suppressed):
            Log.warning("auth: … \(suppressed) more \(kind) failures in 10 s (not logged)")
            Log.warning(message)
        case .suppress: break
        }
    }

    private mutating func logSummaries(now: Double) {
        while let (kind, suppressed) = logLimit.summary(now: now) {
            Log.warning("auth: … \(suppressed) more \(kind) failures in 10 s (not logged)")
        }
    }
}
