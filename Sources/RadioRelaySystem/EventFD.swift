import CLinux
import Glibc

/// An eventfd (nonblocking, close-on-exec): another thread adds to its counter to wake an epoll loop, the loop reads
/// it back to zero. Owned, so it closes once.
package struct EventFD: ~Copyable, Sendable {
    package let descriptor: FileDescriptor

    package init() throws(SystemError) {
        descriptor = try .opening("eventfd") { rr_eventfd() }
    }

    package var rawValue: Int32 { descriptor.rawValue }

    /// Adds one (any thread). Fails only if the counter would overflow, which a reader draining it never allows.
    package func signal() throws(SystemError) {
        _ = try syscall("eventfd_write") { rr_eventfd_signal(descriptor.rawValue) }
    }

    /// Reads the counter back to zero; false when it was zero already.
    package func drain() throws(SystemError) -> Bool {
        let result = try nonblockingSyscall("eventfd_read") { rr_eventfd_drain(descriptor.rawValue) }
        if case .done = result { return true }
        return false
    }
}
