import Synchronization

/// The one thread a loop service runs (a station output's network loop, the status endpoint, the HTTP front end), as
/// its owner holds it: started once, its heartbeat for the watchdog, and stopped once — asked, woken through the
/// loop's eventfd, joined within a timeout.
package final class LoopThread: Sendable {
    private let running: LockedBox<ServiceThread?> = LockedBox(nil)

    package init() {}

    /// Starts `thread` and keeps it.
    package func start(_ thread: ServiceThread) throws {
        try thread.start()
        running.withLock { $0 = thread }
    }

    /// Its heartbeat; empty before `start`.
    package var heartbeats: [Int] {
        running.snapshot.map { [$0.heartbeat.load(ordering: .relaxed)] } ?? []
    }

    /// Asks the thread to stop, wakes its loop, and joins it; false when it outlived `timeout` seconds. `label`
    /// names the loop in the warning when the wake-up fails. A second call does nothing.
    package func stop(timeout: Double, waking wake: borrowing EventFD, label: String) -> Bool {
        guard let thread = running.take() else { return true }
        thread.requestStop()
        do {
            try wake.signal()
        } catch {
            Log.warning("\(label): cannot wake the loop: \(error)")
        }
        return thread.stop(timeout: timeout)
    }
}
