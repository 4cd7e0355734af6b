import CLinux
import Glibc
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The descriptor and syscall layer: EINTR retried, would-block a value, descriptors closed exactly once.
@Suite(.timeLimit(.minutes(1))) struct SystemTests {
    /// A descriptor number just under the limit (at most 4096), far above what other tests running in parallel are
    /// given (the kernel hands out the lowest free number), so checking that it was closed cannot race with someone
    /// reopening it.
    static func highDescriptor() throws -> FileDescriptor {
        let fd = try FileDescriptor.opening("eventfd") { rr_eventfd() }
        var limit = rlimit()
        _ = try syscall("getrlimit") { getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) }
        let high = Int32(clamping: min(limit.rlim_cur, 4096)) - 1 - Int32.random(in: 0..<32)
        return try FileDescriptor.opening("fcntl F_DUPFD") { fcntl(fd.rawValue, F_DUPFD_CLOEXEC, high) }
    }

    static func isOpen(_ fd: Int32) -> Bool {
        fcntl(fd, F_GETFD) != -1 || errno != EBADF
    }

    /// A nonblocking, close-on-exec Unix socket pair.
    struct SocketPair: ~Copyable {
        let a: FileDescriptor
        let b: FileDescriptor

        init() throws {
            var fds: [Int32] = [-1, -1]
            _ = try syscall("socketpair") {
                socketpair(
                    AF_UNIX,
                    Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                        | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
            }
            a = FileDescriptor(owning: fds[0])
            b = FileDescriptor(owning: fds[1])
        }
    }

    @Test func interruptedCallsAreRetriedAndErrnoIsReadAtOnce() throws {
        var calls = 0
        let result = try syscall("fake") { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7 && calls == 3)
        #expect(throws: SystemError("fake", errno: ENOSPC)) {
            try syscall("fake") { () -> Int in
                errno = ENOSPC
                return -1
            }
        }
        #expect(throws: SystemError("fake", errno: EAGAIN)) {  // would-block is an error where none is expected
            try syscall("fake") { () -> Int32 in
                errno = EAGAIN
                return -1
            }
        }
        #expect("\(SystemError("bind 127.0.0.1:80", errno: EADDRINUSE))".contains("in use"))
    }

    @Test func wouldBlockIsAValueOnANonblockingSocket() throws {
        let pair = try SocketPair()
        let a = pair.a.rawValue
        let b = pair.b.rawValue
        var byte: UInt8 = 0
        #expect(try nonblockingSyscall("read") { read(a, &byte, 1) } == .wouldBlock)
        byte = 42
        #expect(try nonblockingSyscall("write") { write(b, &byte, 1) } == .done(1))
        byte = 0
        #expect(try nonblockingSyscall("read") { read(a, &byte, 1) } == .done(1))
        #expect(byte == 42)
        var calls = 0
        let interrupted = try nonblockingSyscall("fake") { () -> Int32 in
            calls += 1
            if calls == 1 {
                errno = EINTR
                return -1
            }
            return 0
        }
        #expect(interrupted == .done(0) && calls == 2)
        #expect(throws: SystemError("read", errno: EBADF)) {
            try nonblockingSyscall("read") { read(-1, &byte, 1) }
        }
    }

    @Test func aDescriptorClosesWhenItsOwnerEndsAndNotAfterRelease() throws {
        var number: Int32 = -1
        do {
            let fd = try Self.highDescriptor()
            number = fd.rawValue
            #expect(Self.isOpen(number))
        }
        #expect(!Self.isOpen(number))  // fcntl(F_GETFD) fails with EBADF: deinit closed it
        let kept = try Self.highDescriptor()
        let raw = kept.release()
        #expect(Self.isOpen(raw))  // released: still open, ours to close
        #expect(close(raw) == 0)
        #expect(throws: SystemError("socket", errno: EAFNOSUPPORT)) {
            _ = try FileDescriptor.opening("socket") { socket(-1, Int32(SOCK_STREAM.rawValue), 0) }
        }
    }

    @Test func socketOptionsAndFlagsAreChecked() throws {
        let pair = try SocketPair()
        let a = pair.a.rawValue
        try setSocketOption(a, SOL_SOCKET, SO_SNDBUF, 8192, name: "SO_SNDBUF")
        #expect(throws: SystemError("setsockopt TCP_NODELAY", errno: EOPNOTSUPP)) {
            try setSocketOption(a, Int32(IPPROTO_TCP), TCP_NODELAY, 1, name: "TCP_NODELAY")
        }
        let event = try EventFD()
        let flags = fcntl(event.rawValue, F_GETFL)
        _ = fcntl(event.rawValue, F_SETFL, flags & ~O_NONBLOCK)
        try setNonblocking(event.rawValue)
        try setNonblocking(event.rawValue)  // already set: nothing to do
        #expect(fcntl(event.rawValue, F_GETFL) & O_NONBLOCK != 0)
        #expect(throws: SystemError("fcntl F_GETFL", errno: EBADF)) { try setNonblocking(-1) }
    }

    @Test func epollReportsAnEventfdWithItsTag() throws {
        let epoll = try Epoll(capacity: 8)
        #expect(epoll.capacity == 8)
        let event = try EventFD()
        try epoll.add(event.rawValue, events: EPOLLIN.rawValue, tag: 77)
        #expect(try epoll.wait(timeoutMilliseconds: 0) == 0)
        #expect(try !event.drain())  // nothing signalled: would block
        try event.signal()
        try event.signal()
        #expect(try epoll.wait(timeoutMilliseconds: 1000) == 1)
        let (tag, mask) = epoll.event(at: 0)
        #expect(tag == 77 && mask & EPOLLIN.rawValue != 0)
        #expect(try event.drain())
        #expect(try epoll.wait(timeoutMilliseconds: 0) == 0)  // drained: level-triggered, quiet again
        try epoll.modify(event.rawValue, events: EPOLLOUT.rawValue, tag: 78)
        #expect(try epoll.wait(timeoutMilliseconds: 1000) == 1)
        #expect(epoll.event(at: 0).tag == 78)
        try epoll.remove(event.rawValue)
        #expect(try epoll.wait(timeoutMilliseconds: 0) == 0)
        #expect(throws: SystemError("epoll_ctl ADD", errno: EBADF)) {
            try epoll.add(-1, events: EPOLLIN.rawValue, tag: 1)
        }
        #expect(throws: SystemError("epoll_ctl MOD", errno: ENOENT)) {
            try epoll.modify(event.rawValue, events: EPOLLIN.rawValue, tag: 1)
        }
        #expect(try Epoll(capacity: 100_000).capacity == Epoll.maxEvents)
    }

    @Test func theMonotonicClockGoesForward() {
        let a = monotonicNow()
        let b = monotonicNow()
        #expect(a > 0 && b >= a)
    }
}
