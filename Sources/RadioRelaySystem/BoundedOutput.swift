import Glibc

/// Writing to an output that may stop taking bytes — the journal's pipe or socket, a terminal on hold, a FIFO whose
/// reader stalled — without ever waiting longer than the caller allows.
///
/// One call waits with `poll` at most `wait` seconds for the output to take bytes, then writes what it takes at
/// once: on a socket `send` with `MSG_DONTWAIT` (it never blocks, whatever the descriptor's flags), elsewhere a
/// `write` of at most `PIPE_BUF` bytes, which a pipe that `poll` called writable takes whole without blocking
/// (Linux: a writable pipe has a free buffer). A regular file always polls writable; its `write` waits for the disk
/// only.
package enum BoundedOutput {
    /// What one call did.
    package enum Outcome: Equatable, Sendable {
        /// Bytes taken (0: none within the wait).
        case wrote(Int)
        /// The output failed (closed, broken pipe, an error): what was to be written is lost.
        case failed(errno: Int32)
    }

    /// Writes a prefix of `bytes` to `fd`, waiting at most `wait` seconds for the output to take any.
    package static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, wait: Double) -> Outcome {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .wrote(0) }
        guard fd >= 0 else { return .failed(errno: EBADF) }
        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let milliseconds = Int32(clamping: wait.isFinite ? Int64((max(0, min(wait, 3600)) * 1000).rounded(.up)) : 0)
        let ready = poll(&entry, 1, milliseconds)
        if ready < 0 { return errno == EINTR ? .wrote(0) : .failed(errno: errno) }
        if ready == 0 { return .wrote(0) }
        if entry.revents & Int16(POLLNVAL) != 0 { return .failed(errno: EBADF) }
        if entry.revents & Int16(POLLOUT) == 0 {
            // POLLERR or POLLHUP without POLLOUT: the reader is gone.
            return .failed(errno: EPIPE)
        }
        let written: Int
        if isSocket(fd) {
            written = send(fd, base, min(bytes.count, 1 << 16), Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
        } else {
            written = Glibc.write(fd, base, min(bytes.count, Int(PIPE_BUF)))
        }
        if written >= 0 { return .wrote(written) }
        let code = errno
        return code == EAGAIN || code == EWOULDBLOCK || code == EINTR ? .wrote(0) : .failed(errno: code)
    }

    /// Writes all of `bytes` within `timeout` seconds in all; false when the output failed or did not take it all
    /// in time (the rest is lost).
    @discardableResult
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], timeout: Double) -> Bool {
        let deadline = monotonicNow() + timeout
        var offset = 0
        while offset < bytes.count {
            let left = deadline - monotonicNow()
            guard left > 0 else { return false }
            let outcome = bytes.withUnsafeBytes {
                write(fd, UnsafeRawBufferPointer(rebasing: $0[offset...]), wait: left)
            }
            guard case .wrote(let count) = outcome else { return false }
            offset += count
        }
        return true
    }

    private static func isSocket(_ fd: Int32) -> Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }
}
