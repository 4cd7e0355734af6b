import CLinux
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The HTTP response check of HTTP-mode listeners, the slow listeners' token bucket, and closing connections.
extension LoadRun {
    /// Consumes response header bytes up to and including the blank line; keeps the first 32 in the slab.
    func skipHTTPHeaders(
        _ c: UnsafeMutablePointer<Connection>, slab: UnsafeMutablePointer<UInt8>,
        _ p: UnsafePointer<UInt8>, _ n: Int
    ) -> Int {
        var match = c.pointee.httpMatch
        var i = 0
        while i < n && match < 4 {
            let b = p[i]
            if c.pointee.httpStatusBytes < 32 {
                slab[c.pointee.httpStatusBytes] = b
                c.pointee.httpStatusBytes += 1
            }
            if b == 13 {
                match = match == 2 ? 3 : 1
            } else if b == 10 {
                match = match == 1 || match == 3 ? match + 1 : 0
            } else {
                match = 0
            }
            i += 1
        }
        c.pointee.httpMatch = match
        return i
    }

    func statusIsOK(_ slab: UnsafeMutablePointer<UInt8>, _ length: Int) -> Bool {
        let line = Array(UnsafeBufferPointer(start: slab, count: length))
        let http = Array("HTTP/1.".utf8)
        if line.count >= 12 && Array(line[0..<7]) == http && Array(line[9..<12]) == Array("200".utf8) { return true }
        return line.count >= 7 && Array(line[0..<7]) == Array("ICY 200".utf8)
    }

    // MARK: Slow listeners

    func refill(_ c: UnsafeMutablePointer<Connection>, now t: Double) {
        c.pointee.tokens = min(slowCapacity, c.pointee.tokens + (t - c.pointee.refilledAt) * slowRate)
        c.pointee.refilledAt = t
    }

    func pause(_ i: Int) {
        connections[i].paused = true
        paused.append(i)
        _ = register(i, EPOLL_CTL_MOD, EPOLLRDHUP.rawValue)
    }

    func resumePaused(now t: Double) {
        var k = 0
        while k < paused.count {
            let i = paused[k]
            let c = connections + i
            guard c.pointee.state == .open, c.pointee.paused else {
                paused.swapAt(k, paused.count - 1)
                paused.removeLast()
                continue
            }
            refill(c, now: t)
            if c.pointee.tokens >= slowResume {
                c.pointee.paused = false
                paused.swapAt(k, paused.count - 1)
                paused.removeLast()
                _ = register(i, EPOLL_CTL_MOD, EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
            } else {
                k += 1
            }
        }
    }

    // MARK: Ending

    func disconnected(_ i: Int, now t: Double, _ reason: String) {
        connections[i].outcome = .disconnected
        connections[i].endedAt = t
        closeConnection(i)
        fail(i, reason)
    }

    func closeConnection(_ i: Int) {
        let c = connections + i
        if c.pointee.fd >= 0 { close(c.pointee.fd) }  // also leaves the epoll set
        c.pointee.fd = -1
        c.pointee.state = .closed
        c.pointee.paused = false
    }

    func fail(_ i: Int, _ reason: String) {
        if connections[i].failure == nil { connections[i].failure = reason }
    }
}
