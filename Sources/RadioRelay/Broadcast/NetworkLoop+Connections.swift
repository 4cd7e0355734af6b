import CLinux
import Foundation
import Glibc
import Synchronization

/// Accepting, reading from and closing listeners' connections.
extension NetworkLoop {

    func acceptAll() {
        while true {
            var storage = sockaddr_storage()
            var length = UInt32(MemoryLayout<sockaddr_storage>.size)
            let accepted: IOResult<Int32>
            do {
                accepted = try nonblockingSyscall("accept4") {
                    withUnsafeMutablePointer(to: &storage) { rr_accept4(listenFD, $0, &length) }
                }
            } catch {
                switch error.errno {
                case ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE:
                    Log.error("\(name): cannot accept: \(error); raise LimitNOFILE")
                    return
                default:
                    Log.warning("\(name): \(error)")
                    return
                }
            }
            guard case .done(let fd) = accepted else { return }
            admit(FileDescriptor(owning: fd), peer: SocketAddress(storage: storage, length: length))
        }
    }

    func admit(_ socket: consuming FileDescriptor, peer: SocketAddress) {
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
            Log.notice("\(name): listener \(peer) refused: \(refusal)")
            return  // `socket` closes here
        }
        let fd = socket.rawValue
        // Both only tune the connection (latency, how much the kernel queues): a refusal is worth a warning, not
        // the listener.
        do {
            try setSocketOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, name: "TCP_NODELAY")
            try setSocketOption(fd, SOL_SOCKET, SO_SNDBUF, Int32(clamping: configuration.sendBuffer), name: "SO_SNDBUF")
        } catch {
            Log.warning("\(name): listener \(peer): \(error)")
        }
        do {
            try epoll.add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(fd))
        } catch {
            Log.warning("\(name): listener \(peer) not served: \(error)")
            return
        }
        let listener = Listener(socket: socket, peer: peer, connectedAt: monotonicNow())
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
            let result: IOResult<Int>
            do {
                result = try nonblockingSyscall("read") {
                    scratch.withUnsafeMutableBytes { read(listener.fd, $0.baseAddress, $0.count) }
                }
            } catch {
                disconnect(listener, reason: "read failed: \(String(cString: strerror(error.errno)))")
                return false
            }
            switch result {
            case .wouldBlock:
                return true
            case .done(0):
                disconnect(listener, reason: "closed by listener")
                return false
            case .done(let n):
                listener.bytesRead += n
                if listener.bytesRead > configuration.readCap {
                    counters.droppedChatty.add(1, ordering: .relaxed)
                    disconnect(listener, reason: "sent more than \(configuration.readCap) bytes")
                    return false
                }
            }
        }
    }

    /// Forgets the listener; its socket closes (and leaves the epoll set) when the last reference to it goes.
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
        if !quiet {
            let duration = monotonicNow() - listener.connectedAt
            Log.info(
                "\(name): listener \(listener.peer) left after \(String(format: "%.1f", duration)) s, "
                    + "\(listener.bytesSent) bytes: \(reason)")
        }
    }
}
