import Glibc

/// A value behind a pthread mutex. `Synchronization.Mutex` locks through a raw futex that ThreadSanitizer does not
/// see, which makes it report races that are not there; this box is what the TSan-checked code uses.
package final class LockedBox<Value>: @unchecked Sendable {
    /// Allocated, not a stored `pthread_mutex_t`: `&storedProperty` would be a Swift inout access on every lock,
    /// itself a data race between threads (and the mutex must not move).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @discardableResult
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    package var snapshot: Value { withLock { $0 } }

    /// The optional value, leaving nil behind: whoever takes it first gets it (a thread to stop and join once).
    package func take<Wrapped>() -> Wrapped? where Value == Wrapped? {
        withLock { stored in
            defer { stored = nil }
            return stored
        }
    }
}
