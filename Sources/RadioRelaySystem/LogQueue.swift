import CLinux
import Glibc

/// A bounded queue of log lines and the thread that writes them, so that no thread that logs — a network loop, a
/// pipeline, the main thread — ever waits for a slow output (a stalled journal, a terminal on hold, a FIFO whose
/// reader stopped reading, a hung disk).
///
/// `enqueue` takes a lock for as long as an array append takes and never waits for output. When `capacity` lines are
/// waiting, further lines are dropped and counted, and the next batch that gets out starts with a line saying how
/// many were lost. The writer formats whole batches and hands them to its `sink`, which waits at most a slice of time
/// for the output to take bytes (`BoundedOutput`), so the writer notices work given to it (`perform`: the access
/// log opens its file there) and a stop even while the output is stalled. No lock is held while the sink writes.
///
/// `flush(timeout:)` waits — at most its timeout — for what is queued to be written; it never writes on the calling
/// thread while a writer runs, so a stalled output cannot hold the caller (a stop, the exit) past the timeout.
/// `stop(timeout:)` ends the writer the same way. What could not be written in time is counted, not waited for.
package final class LogQueue: @unchecked Sendable {
    package struct Entry {
        package var priority: Log.Priority
        package var message: String
        package var time: timespec

        package init(priority: Log.Priority, message: String, time: timespec) {
            self.priority = priority
            self.message = message
            self.time = time
        }
    }

    /// Writes a prefix of the bytes, waiting at most the given seconds for the output to take any.
    package typealias Sink = @Sendable (UnsafeRawBufferPointer, Double) -> BoundedOutput.Outcome

    /// Seconds the writer lets its sink wait before it looks at its work again.
    package static let slice = 0.1

    package let capacity: Int
    // Internal, not private, where the writer thread (`LogQueue+Writer.swift`) uses them; the state is `mutex`'s.
    let format: @Sendable ([Entry], Int) -> String
    let sink: Sink
    /// Called on the writer with the lines a failed output lost (e.g. to count them).
    let onFailure: @Sendable (Int, Int32) -> Void
    /// Allocated, never moved (see `LockedBox`); they guard everything below.
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    let condition: UnsafeMutablePointer<pthread_cond_t>
    var pending: [Entry] = []
    var dropped = 0
    var tasks: [@Sendable () -> Void] = []
    /// Lines accepted by `enqueue`, and those of them written or lost since (a flush waits for the second to reach
    /// the first); tasks given and run, likewise.
    private var accepted = 0
    var settled = 0
    private var tasksGiven = 0
    var tasksRun = 0
    /// Lines the writer left unwritten when it stopped.
    var abandoned = 0
    var writerRuns = false
    /// The writer ended by `stop`: nothing is written any more.
    var ended = false
    var stopping = false
    var stopDeadline = 0.0

    /// - Parameters:
    ///   - format: turns a batch and the number of lines dropped before it into text.
    ///   - sink: writes a prefix of the text (only the writer thread, or `flush` when there is none, calls it).
    ///   - onFailure: told how many lines a failed write lost, and the error.
    package init(
        capacity: Int, format: @escaping @Sendable ([Entry], Int) -> String, sink: @escaping Sink,
        onFailure: @escaping @Sendable (Int, Int32) -> Void = { _, _ in }
    ) {
        self.capacity = max(1, capacity)
        self.format = format
        self.sink = sink
        self.onFailure = onFailure
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
        pending.reserveCapacity(self.capacity)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Queues one line, or counts it as dropped when the queue is full (false); never waits for output.
    @discardableResult
    package func enqueue(_ entry: Entry) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard !stopping, pending.count < capacity else {
            dropped += 1
            pthread_cond_broadcast(condition)
            return false
        }
        pending.append(entry)
        accepted += 1
        pthread_cond_broadcast(condition)
        return true
    }

    /// Runs `task` on the writer thread before its next batch (by the next `flush` when no writer runs): work that
    /// may block, such as opening a file, which must never happen on the thread that asks for it.
    package func perform(_ task: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        tasks.append(task)
        tasksGiven += 1
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Waits at most `timeout` seconds for every line queued (and task given) before the call to be written (or
    /// lost to a failed output); never writes on the calling thread while the writer runs. Without a writer, writes
    /// them here, within the timeout. Returns how many of those lines were not written in time.
    @discardableResult
    package func flush(timeout: Double = 1) -> Int {
        let deadline = monotonicNow() + max(0, timeout)
        pthread_mutex_lock(mutex)
        guard writerRuns else {
            pthread_mutex_unlock(mutex)
            return flushWithoutWriter(deadline: deadline)
        }
        let target = accepted
        let taskTarget = tasksGiven
        while (settled < target || tasksRun < taskTarget) && writerRuns {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let left = deadline - monotonicNow()
            if left <= 0 { break }
            let wake = Self.realtime(now, plus: min(left, 1))
            var until = wake
            _ = pthread_cond_timedwait(condition, mutex, &until)
        }
        let unwritten = max(0, target - settled)
        pthread_mutex_unlock(mutex)
        return unwritten
    }

    /// Without a writer thread: runs the tasks and writes what is queued on the calling thread, until `deadline`.
    private func flushWithoutWriter(deadline: Double) -> Int {
        pthread_mutex_lock(mutex)
        guard !ended else {
            pthread_mutex_unlock(mutex)
            return 0
        }
        let jobs = tasks
        tasks.removeAll()
        tasksRun += jobs.count
        let batch = pending
        let lost = dropped
        pending.removeAll(keepingCapacity: true)
        dropped = 0
        settled += batch.count
        pthread_mutex_unlock(mutex)
        for job in jobs { job() }
        guard !batch.isEmpty || lost > 0 else { return 0 }
        let text = Array(format(batch, lost).utf8)
        var offset = 0
        while offset < text.count {
            let left = deadline - monotonicNow()
            let outcome = text.withUnsafeBytes {
                sink(UnsafeRawBufferPointer(rebasing: $0[offset...]), max(0, min(left, Self.slice)))
            }
            guard case .wrote(let count) = outcome else {
                if case .failed(let code) = outcome { onFailure(batch.count, code) }
                return 0
            }
            offset += count
            if offset < text.count && left <= 0 { return batch.count }
        }
        return 0
    }

    /// Ends the writer: it writes what is queued for at most `timeout` seconds, then stops; what is left is lost.
    /// Lines queued after the call are dropped. Returns how many lines were not written.
    @discardableResult
    package func stop(timeout: Double = 1) -> Int {
        pthread_mutex_lock(mutex)
        guard writerRuns else {
            stopping = true
            pthread_mutex_unlock(mutex)
            return flushWithoutWriter(deadline: monotonicNow() + max(0, timeout))
        }
        stopping = true
        stopDeadline = monotonicNow() + max(0, timeout)
        pthread_cond_broadcast(condition)
        // The writer looks at the deadline at least once a slice.
        let giveUp = stopDeadline + 2 * Self.slice
        while writerRuns {
            let left = giveUp - monotonicNow()
            if left <= 0 { break }
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            var until = Self.realtime(now, plus: min(left, 1))
            _ = pthread_cond_timedwait(condition, mutex, &until)
        }
        // A writer still inside its sink (a write the kernel holds) is left behind; its lines count as unwritten.
        let unwritten = writerRuns ? max(0, accepted - settled) : abandoned
        pthread_mutex_unlock(mutex)
        return unwritten
    }

    /// Whether the writer thread runs (false once `stop` ended it, or when it never started).
    package var writerIsRunning: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return writerRuns
    }

    /// Lines waiting and lines dropped so far (tests).
    package var counts: (pending: Int, dropped: Int) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return (pending.count, dropped)
    }

    private static func realtime(_ now: timespec, plus seconds: Double) -> timespec {
        let nanoseconds = Int(now.tv_nsec) + Int((seconds - seconds.rounded(.down)) * 1e9)
        return timespec(
            tv_sec: now.tv_sec + Int(seconds.rounded(.down)) + nanoseconds / 1_000_000_000,
            tv_nsec: nanoseconds % 1_000_000_000)
    }
}
