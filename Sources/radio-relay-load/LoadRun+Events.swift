import CLinux
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What the load run does with each epoll event of a listener: read, check the bytes as Ogg, time them.
extension LoadRun {
    // MARK: Events

    func handle(_ i: Int, mask: UInt32, now t: Double) {
        guard i < count else { return }
        let c = connections + i
        switch c.pointee.state {
        case .waiting, .closed:
            return
        case .connecting:
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(c.pointee.fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error != 0 { return connectFailed(i, "connect: \(String(cString: strerror(error)))") }
            if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { return connectFailed(i, "connect: hung up") }
            if mask & EPOLLOUT.rawValue != 0 { connected(i, now: t) }
        case .requesting:
            if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                return disconnected(i, now: t, "reset while requesting")
            }
            sendRequest(i, now: t)
        case .open:
            if c.pointee.slow && mask & EPOLLRDHUP.rawValue != 0 {
                // Note when the server gave up on a slow listener rather than when it would have drained its buffer.
                return disconnected(i, now: t, "closed by the server")
            }
            if c.pointee.paused {
                if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                    disconnected(i, now: t, "reset by the server")
                }
                return
            }
            readable(i, now: t)
        }
    }

    func readable(_ i: Int, now t: Double) {
        let c = connections + i
        for _ in 0..<4 {
            var want = Self.bufferSize
            if c.pointee.slow {
                refill(c, now: t)
                want = min(want, Int(c.pointee.tokens))
                if want < 1 { return pause(i) }
            }
            let n = read(c.pointee.fd, buffer, want)
            if n > 0 {
                if c.pointee.slow { c.pointee.tokens -= Double(n) }
                received(i, n, now: t)
                if c.pointee.state != .open || n < want { return }
                continue
            }
            if n == 0 { return disconnected(i, now: t, "closed by the server") }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return }
            return disconnected(i, now: t, "read: \(String(cString: strerror(errno)))")
        }
    }

    func received(_ i: Int, _ n: Int, now t: Double) {
        let c = connections + i
        let slab = slabs + i * OggStreamCheck.slabSize
        c.pointee.bytes += n
        if c.pointee.firstByteAt.isNaN { c.pointee.firstByteAt = t }
        if !c.pointee.firstAudioAt.isNaN { c.pointee.maxStall = max(c.pointee.maxStall, t - c.pointee.lastDataAt) }
        c.pointee.lastDataAt = t
        var p = UnsafePointer(buffer)
        var left = n
        if c.pointee.httpMatch < 4 {
            let used = skipHTTPHeaders(c, slab: slab, p, left)
            p += used
            left -= used
            if c.pointee.httpMatch < 4 { return }
            guard statusIsOK(slab, c.pointee.httpStatusBytes) else {
                let line = String(
                    decoding: UnsafeBufferPointer(start: slab, count: c.pointee.httpStatusBytes), as: UTF8.self)
                c.pointee.outcome = .refused
                closeConnection(i)
                return fail(i, "HTTP response: \(line.prefix { $0 != "\r" && $0 != "\n" })")
            }
        }
        guard left > 0 else { return }
        c.pointee.check.feed(p, left, slab: slab)
        if c.pointee.firstAudioAt.isNaN && c.pointee.check.audioPages > 0 { c.pointee.firstAudioAt = t }
    }

    /// Seconds on the monotonic clock (the library's one clock).
    func now() -> Double { monotonicNow() }
}
