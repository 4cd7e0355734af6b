import CLinux
import Glibc

/// Accepting, reading from and closing listeners' connections.
extension NetworkLoop {

    func acceptAll() {
        while true {
            var storage = sockaddr_storage()
            var length = UInt32(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) { rr_accept4(listenFD, $0, &length) }
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EAGAIN, EWOULDBLOCK: return
                case EMFILE, ENFILE:
                    Log.error("\(name): cannot accept: \(SystemError("accept4")); raise LimitNOFILE")
                    return
                default:
                    Log.warning("\(name): accept4: \(SystemError("accept4"))")
                    return
                }
            }
            let peer = SocketAddress(storage: storage, length: length)
            admit(fd, peer: peer)
        }
    }

    func admit(_ fd: Int32, peer: SocketAddress) {
        counters.connections.add(1, ordering: .relaxed)
        let host = peer.host
        var refusal: String?
        if configuration.maxListeners > 0 && active.count >= configuration.maxListeners {
            refusal = "station full (\(configuration.maxListeners) listeners)"
        } else if configuration.maxPerIP > 0 && perHost[host, default: 0] >= configuration.maxPerIP {
            refusal = "too many connections from \(host) (limit \(configuration.maxPerIP))"
        }
        if let refusal {
            counters.rejected.add(1, ordering: .relaxed)
            close(fd)
            Log.notice("\(name): listener \(peer) refused: \(refusal)")
            return
        }
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        var buffer = Int32(configuration.sendBuffer)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, socklen_t(MemoryLayout<Int32>.size))
        guard rr_epoll_ctl(epoll, EPOLL_CTL_ADD, fd, EPOLLIN.rawValue | EPOLLRDHUP.rawValue, UInt64(fd)) == 0 else {
            Log.warning("\(name): epoll_ctl for \(peer): \(SystemError("epoll_ctl"))")
            close(fd)
            return
        }
        let listener = Listener(fd: fd, peer: peer, connectedAt: monotonicNow())
        let slot = Int(fd)
        if slot >= byFD.count {
            byFD += Array(repeating: nil, count: slot + 1 - byFD.count + 64)
            position += Array(repeating: -1, count: byFD.count - position.count)
        }
        byFD[slot] = listener
        position[slot] = active.count
        active.append(listener)
        perHost[host, default: 0] += 1
        counters.listeners.store(active.count, ordering: .relaxed)
        Log.info("\(name): listener \(peer) connected (\(active.count) listening)")
        refresh()  // the newest pages, even if their wake-up is still queued
        flush(listener, now: monotonicNow())  // headers and burst right away
    }

    /// Reads what a listener sent and drops it; false when the listener was disconnected.
    func readAndDiscard(_ listener: Listener) -> Bool {
        while true {
            let n = scratch.withUnsafeMutableBytes { read(listener.fd, $0.baseAddress, $0.count) }
            if n > 0 {
                listener.bytesRead += n
                if listener.bytesRead > configuration.readCap {
                    counters.droppedChatty.add(1, ordering: .relaxed)
                    disconnect(listener, reason: "sent more than \(configuration.readCap) bytes")
                    return false
                }
                continue
            }
            if n == 0 {
                disconnect(listener, reason: "closed by listener")
                return false
            }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return true }
            disconnect(listener, reason: "read failed: \(String(cString: strerror(errno)))")
            return false
        }
    }

    func disconnect(_ listener: Listener, reason: String, quiet: Bool = false) {
        let slot = Int(listener.fd)
        guard slot < byFD.count, byFD[slot] === listener else { return }
        let index = position[slot]
        let last = active.removeLast()
        if last !== listener {
            active[index] = last
            position[Int(last.fd)] = index
        }
        byFD[slot] = nil
        position[slot] = -1
        perHost[listener.host, default: 1] -= 1
        if perHost[listener.host] == 0 { perHost[listener.host] = nil }
        counters.listeners.store(active.count, ordering: .relaxed)
        close(listener.fd)  // also removes it from the epoll set
        if !quiet {
            let duration = monotonicNow() - listener.connectedAt
            Log.info("\(name): listener \(listener.peer) left after \(String(format: "%.1f", duration)) s, "
                     + "\(listener.bytesSent) bytes: \(reason)")
        }
    }
}
