import Glibc

/// One open file descriptor, owned by exactly one value. It is closed when that value ends (`deinit`), so no path —
/// an early `throw`, a forgotten branch — can leak it or close it twice (the listening socket once was, when
/// `eventfd` failed). Move-only, so ownership is visible in the code; `release()` hands it on.
package struct FileDescriptor: ~Copyable, Sendable {
    /// The descriptor number, valid while this value lives. Never close it yourself.
    package let rawValue: Int32

    /// Takes ownership of an open descriptor.
    package init(owning rawValue: Int32) {
        precondition(rawValue >= 0, "not a descriptor: \(rawValue)")
        self.rawValue = rawValue
    }

    /// Takes ownership of what a call returns (`socket`, `accept4`, `eventfd`, `epoll_create1` …), or throws its
    /// error (`EINTR` retried).
    package static func opening(_ call: @autoclosure () -> String, _ body: () -> Int32) throws(SystemError)
        -> FileDescriptor
    {
        FileDescriptor(owning: try syscall(call(), body))
    }

    /// Gives up ownership without closing: the caller now owns the number.
    package consuming func release() -> Int32 {
        let fd = rawValue
        discard self
        return fd
    }

    deinit {
        // Not retried on EINTR: on Linux the descriptor is released either way, and a retry could close a number
        // another thread has just been given. EBADF means the number was closed behind our back: a bug.
        if Glibc.close(rawValue) != 0 {
            precondition(errno != EBADF, "descriptor \(rawValue) was closed by someone else")
        }
    }
}
