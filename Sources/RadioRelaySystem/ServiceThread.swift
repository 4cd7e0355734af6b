import CLinux
import Glibc
import Synchronization

/// One long-running thread of the server (a station's pipeline, a network loop): a pthread that is joined on stop,
/// with a stop flag its body polls and a heartbeat its body advances on every iteration.
///
/// A body that returns or throws while nobody asked it to stop is a bug or an unrecoverable error (an upstream
/// failure is not: its station handles that by reconnecting). Then `onUnexpectedExit` runs — by default it logs
/// and ends the process with EX_SOFTWARE, so systemd restarts a whole server instead of keeping a half-alive one.
package final class ServiceThread: Sendable {
    package typealias Body = @Sendable (_ thread: ServiceThread) throws -> Void

    package let name: String
    /// Advanced by the body on every iteration of its loop (see `beat()`), read by the watchdog.
    package let heartbeat = Atomic<Int>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)
    private let body: Body
    private let onUnexpectedExit: @Sendable (String, (any Error)?) -> Void
    /// The pthread, from `start` until it is joined.
    private let handle = LockedBox<pthread_t?>(nil)

    /// - Parameter onUnexpectedExit: called on the thread itself with its name and the error, if any.
    package init(
        name: String,
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void = ServiceThread.terminateProcess,
        body: @escaping Body
    ) {
        self.name = name
        self.body = body
        self.onUnexpectedExit = onUnexpectedExit
    }

    /// Whether the body should return: polled by its loop.
    package var isStopping: Bool { stopRequested.load(ordering: .acquiring) }
    /// True from `start` until the body has returned.
    package var isRunning: Bool { running.load(ordering: .acquiring) }

    /// One iteration of the body's loop.
    package func beat() { heartbeat.add(1, ordering: .relaxed) }

    /// Starts the thread (once).
    package func start() throws {
        try handle.withLock { stored in
            precondition(stored == nil, "ServiceThread \(name) started twice")
            running.store(true, ordering: .releasing)
            // The thread holds a reference to its ServiceThread until its body has returned.
            let context = Unmanaged.passRetained(self).toOpaque()
            var thread = pthread_t()
            let result = pthread_create(
                &thread, nil,
                { context in
                    guard let context else { return nil }
                    Unmanaged<ServiceThread>.fromOpaque(context).takeRetainedValue().main()
                    return nil
                }, context)
            guard result == 0 else {
                Unmanaged<ServiceThread>.fromOpaque(context).release()
                running.store(false, ordering: .releasing)
                throw SystemError("pthread_create \(name)", errno: result)
            }
            stored = thread
        }
    }

    private func main() {
        // A name helps `top -H` and core dumps; failing to set one changes nothing else.
        _ = rr_thread_set_name(name)
        var failure: (any Error)?
        do { try body(self) } catch { failure = error }
        running.store(false, ordering: .releasing)
        if !isStopping { onUnexpectedExit(name, failure) }
    }

    /// Asks the body to return (it sees `isStopping`); the owner then nudges it out of a blocking wait.
    package func requestStop() { stopRequested.store(true, ordering: .releasing) }

    /// Asks the body to stop and joins the thread. Returns false if it did not end within `timeout` seconds (the
    /// thread is then detached and left to finish, or to the process's exit).
    @discardableResult
    package func stop(timeout: Double = 10) -> Bool {
        requestStop()
        let joinable = handle.take()
        guard let thread = joinable else { return true }
        let milliseconds = Int(max(0, min(timeout.isNaN ? 0 : timeout, 86_400)) * 1000)
        let result = rr_thread_join(UInt(thread), milliseconds)
        guard result == 0 else {
            Log.error("\(name): thread did not stop within \(timeout) s (\(SystemError("join", errno: result)))")
            // Nobody will join it now: its resources go back to the system when it ends by itself.
            _ = pthread_detach(thread)
            return false
        }
        return true
    }

    /// The default reaction to a thread that ended by itself: the log line, then exit 70 (EX_SOFTWARE).
    package static let terminateProcess: @Sendable (String, (any Error)?) -> Void = { name, error in
        Log.error("\(name): thread ended unexpectedly\(error.map { ": \($0)" } ?? ""); exiting")
        exit(ExitCode.software.rawValue)
    }
}
