import CLinux
import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Writing to a listener that is gone gives EPIPE, never SIGPIPE, whatever the process does with that signal, so
/// the library is safe to embed in a process that keeps SIGPIPE's default (death).
///
/// How this is checked without risking the test runner: SIGPIPE is blocked in the test's own thread, so a send
/// that raised it would leave it pending on that thread (the kernel sends it to the writing thread, and a blocked
/// signal is kept even when its disposition is to ignore it) instead of killing anyone. `sigpending` shows it;
/// a plain `write` to the same dead socket shows that the check would see it. The pending signal is consumed and
/// the thread's mask restored afterwards.
@Suite struct BroadcasterSendTests {
    @Test func theSendHelperAsksForNoSignal() {
        #expect(rr_send_iov_flags() & Int32(MSG_NOSIGNAL) != 0)
        #expect(rr_send_iov_flags() & Int32(MSG_DONTWAIT) != 0)
    }

    @Test func writingToAClosedPeerGivesEPIPEAndNoSIGPIPE() throws {
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        let writer = FileDescriptor(owning: fds[0])
        Glibc.close(fds[1])  // the listener is gone

        var pipeOnly = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        var previous = sigset_t()
        #expect(pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous) == 0)
        defer {
            var zero = timespec(tv_sec: 0, tv_nsec: 0)
            while sigtimedwait(&pipeOnly, nil, &zero) == SIGPIPE {}
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        func pipePending() -> Bool {
            var pending = sigset_t()
            sigpending(&pending)
            return sigismember(&pending, SIGPIPE) == 1
        }
        #expect(!pipePending())

        // Two pieces, as the loop sends them: straight from two buffers.
        let first: [UInt8] = Array("OggS".utf8)
        let second: [UInt8] = Array(repeating: 7, count: 100)
        let result = first.withUnsafeBytes { a in
            second.withUnsafeBytes { b in
                var pieces = [
                    iovec(iov_base: UnsafeMutableRawPointer(mutating: a.baseAddress), iov_len: a.count),
                    iovec(iov_base: UnsafeMutableRawPointer(mutating: b.baseAddress), iov_len: b.count),
                ]
                return pieces.withUnsafeMutableBufferPointer {
                    (rr_send_iov(writer.rawValue, $0.baseAddress, 2), errno)
                }
            }
        }
        #expect(result.0 == -1 && result.1 == EPIPE)
        #expect(!pipePending(), "rr_send_iov raised SIGPIPE")

        // The control: a plain write to the same socket does raise it (held pending by the mask).
        let plain = first.withUnsafeBytes { Glibc.write(writer.rawValue, $0.baseAddress, $0.count) }
        #expect(plain == -1)
        #expect(pipePending(), "the check cannot see SIGPIPE")
    }
}
