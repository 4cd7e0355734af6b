import CLinux
import Glibc

/// The log's bounded queue and the thread that drains it, so that no thread that logs — the network loop, a
/// pipeline — ever blocks on a slow stderr (a stalled journal, a terminal on hold, a full pipe).
///
/// `enqueue` takes a lock for as long as an array append takes and never waits for output. When `capacity`
/// lines are waiting, further lines are dropped and counted, and the next batch that gets out starts with a line
/// saying how many were lost. The writer formats and writes whole batches (one `write` per batch where it can).
/// `flush()` writes what is queued from the calling thread (at exit: `Log` registers it with `atexit`).
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

    package let capacity: Int
    private let format: @Sendable ([Entry], Int) -> String
    private let sink: @Sendable (String) -> Void
    /// Allocated, never moved (see `LockedBox`); they guard everything below.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var pending: [Entry] = []
    private var dropped = 0
    private var writing = false

    /// - Parameters:
    ///   - format: turns a batch and the number of lines dropped before it into text.
    ///   - sink: writes text (may block; only the writer thread and `flush` call it).
    package init(
        capacity: Int, format: @escaping @Sendable ([Entry], Int) -> String,
        sink: @escaping @Sendable (String) -> Void
    ) {
        self.capacity = max(1, capacity)
        self.format = format
        self.sink = sink
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

    /// Queues one line, or counts it as dropped when the queue is full; never waits for output.
    package func enqueue(_ entry: Entry) {
        pthread_mutex_lock(mutex)
        if pending.count < capacity {
            pending.append(entry)
        } else {
            dropped += 1
        }
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Starts the writer thread; false when it cannot start (then the caller writes lines itself).
    package func startWriter() -> Bool {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { context in
                let queue = Unmanaged<LogQueue>.fromOpaque(context!).takeRetainedValue()
                _ = rr_thread_set_name("log-writer")
                queue.drainForever()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<LogQueue>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    private func drainForever() {
        var spare: [Entry] = []
        spare.reserveCapacity(capacity)
        while true {
            pthread_mutex_lock(mutex)
            while pending.isEmpty && dropped == 0 { pthread_cond_wait(condition, mutex) }
            swap(&spare, &pending)
            let lost = dropped
            dropped = 0
            writing = true
            pthread_mutex_unlock(mutex)
            sink(format(spare, lost))
            spare.removeAll(keepingCapacity: true)
            pthread_mutex_lock(mutex)
            writing = false
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
    }

    /// Writes everything queued from the calling thread, after the batch the writer is on (order is kept). It waits
    /// at most `timeout` seconds for that batch, so that a stuck stderr cannot keep the process from exiting.
    package func flush(timeout: Int = 2) {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += timeout
        pthread_mutex_lock(mutex)
        while writing {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        let batch = pending
        let lost = dropped
        pending.removeAll(keepingCapacity: true)
        dropped = 0
        pthread_mutex_unlock(mutex)
        if !batch.isEmpty || lost > 0 { sink(format(batch, lost)) }
    }

    /// Lines waiting and lines dropped so far (tests).
    package var counts: (pending: Int, dropped: Int) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return (pending.count, dropped)
    }
}
