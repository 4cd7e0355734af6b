import Glibc

/// A failed system call: which, and errno. Would-block is not one of these (see `IOResult`): on a nonblocking
/// descriptor it is a normal event, not a failure.
package struct SystemError: Error, CustomStringConvertible, Equatable {
    package let call: String
    package let errno: Int32

    /// Reads `errno` as a default argument, so call it right after the failed call (`syscall` does that for you).
    package init(_ call: String, errno: Int32 = Glibc.errno) {
        self.call = call
        self.errno = errno
    }

    package var description: String { "\(call): \(String(cString: strerror(errno)))" }
}
