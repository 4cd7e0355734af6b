import CLinux
import Glibc

/// What a call on a nonblocking descriptor did: its result, or that it would have blocked. Would-block is a value,
/// not an error, because on the serving path it is the normal way a full socket or an empty eventfd answers.
package enum IOResult<Value> {
    case done(Value)
    case wouldBlock
}

extension IOResult: Equatable where Value: Equatable {}
extension IOResult: Sendable where Value: Sendable {}

/// Runs a system call that returns -1 and sets `errno` on failure (modelled on swift-system's `valueOrErrno` and
/// swift-nio's `syscall(blocking:)`): `errno` is read at once, before anything else can change it, `EINTR` is
/// retried, and any other failure is thrown. Would-block is an error here; use `nonblockingSyscall` where it is
/// expected. The name is an autoclosure so that building it costs nothing on success.
@inline(__always)
package func syscall<Result: FixedWidthInteger & SignedInteger>(
    _ call: @autoclosure () -> String, _ body: () -> Result
) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(call(), errno: code)
    }
}

/// `syscall` for a nonblocking descriptor: `EAGAIN`/`EWOULDBLOCK` come back as `.wouldBlock`.
@inline(__always)
package func nonblockingSyscall<Result: FixedWidthInteger & SignedInteger>(
    _ call: @autoclosure () -> String, _ body: () -> Result
) throws(SystemError) -> IOResult<Result> {
    while true {
        let result = body()
        if result != -1 { return .done(result) }
        let code = errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
        throw SystemError(call(), errno: code)
    }
}

/// `setsockopt` for an `Int32` option, checked: the settings we make (no delay, buffer sizes, address reuse) change
/// how a socket behaves, so a refusal is reported rather than silently ignored.
package func setSocketOption(_ fd: Int32, _ level: Int32, _ option: Int32, _ value: Int32, name: String)
    throws(SystemError)
{
    var value = value
    _ = try syscall("setsockopt \(name)") {
        setsockopt(fd, level, option, &value, socklen_t(MemoryLayout<Int32>.size))
    }
}

/// Sets `O_NONBLOCK` (checked, both the read and the write of the flags).
package func setNonblocking(_ fd: Int32) throws(SystemError) {
    let flags = try syscall("fcntl F_GETFL") { fcntl(fd, F_GETFL) }
    if flags & O_NONBLOCK != 0 { return }
    _ = try syscall("fcntl F_SETFL O_NONBLOCK") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
}

/// One `send` of a short answer on a fresh socket (its send buffer takes it) with `MSG_NOSIGNAL`, whatever the
/// outcome: the socket is closed right after (a refusal's 503).
package func sendBestEffort(_ bytes: [UInt8], on fd: Int32) {
    bytes.withUnsafeBytes { buffer in
        var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: buffer.baseAddress), iov_len: buffer.count)
        _ = rr_send_iov(fd, &vector, 1)
    }
}
