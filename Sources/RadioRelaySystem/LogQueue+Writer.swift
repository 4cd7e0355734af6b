import CLinux
import Glibc

/// The writer thread of a `LogQueue`: started once, it runs the tasks given to it and writes the queued lines in
/// batches, each handed to the sink a slice at a time, until `stop` ends it.
extension LogQueue {
    /// Starts the writer thread; false when it cannot start (then `flush` writes on the calling thread).
    package func startWriter() -> Bool {
        pthread_mutex_lock(mutex)
        guard !writerRuns, !stopping else {
            pthread_mutex_unlock(mutex)
            return writerRuns
        }
        writerRuns = true
        pthread_mutex_unlock(mutex)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                let queue = Unmanaged<LogQueue>.fromOpaque(context).takeRetainedValue()
                _ = rr_thread_set_name("log-writer")
                queue.writeUntilStopped()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<LogQueue>.fromOpaque(context).release()
            pthread_mutex_lock(mutex)
            writerRuns = false
            pthread_mutex_unlock(mutex)
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// The writer thread: tasks first, then batches, each written in slices so that new tasks and a stop are seen
    /// while the output is stalled.
    private func writeUntilStopped() {
        var spare: [Entry] = []
        spare.reserveCapacity(capacity)
        var text: [UInt8] = []
        var offset = 0
        var lines = 0
        while true {
            pthread_mutex_lock(mutex)
            while pending.isEmpty && dropped == 0 && tasks.isEmpty && offset == text.count && !stopping {
                pthread_cond_wait(condition, mutex)
            }
            if stopping
                && (monotonicNow() >= stopDeadline || (pending.isEmpty && tasks.isEmpty && offset == text.count))
            {
                // What is left is lost: counted as settled, so that no one waits for it.
                let left = pending.count + (offset < text.count ? lines : 0)
                settled += left
                abandoned += left
                pending.removeAll()
                writerRuns = false
                ended = true
                pthread_cond_broadcast(condition)
                pthread_mutex_unlock(mutex)
                return
            }
            let jobs = tasks
            tasks.removeAll()
            var lost = 0
            if offset == text.count {
                swap(&spare, &pending)
                lost = dropped
                dropped = 0
            }
            pthread_mutex_unlock(mutex)
            for job in jobs { job() }
            if !jobs.isEmpty { settle(lines: 0, tasks: jobs.count) }
            if offset == text.count && (!spare.isEmpty || lost > 0) {
                text = Array(format(spare, lost).utf8)
                offset = 0
                lines = spare.count
                spare.removeAll(keepingCapacity: true)
            }
            guard offset < text.count else { continue }
            let outcome = text.withUnsafeBytes { sink(UnsafeRawBufferPointer(rebasing: $0[offset...]), Self.slice) }
            switch outcome {
            case .wrote(let count): offset = min(text.count, offset + max(0, count))
            case .failed(let code):
                onFailure(lines, code)
                offset = text.count
            }
            if offset == text.count {
                settle(lines: lines, tasks: 0)
                lines = 0
                text = []
                offset = 0
            }
        }
    }

    private func settle(lines: Int, tasks: Int) {
        pthread_mutex_lock(mutex)
        settled += lines
        tasksRun += tasks
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }
}
