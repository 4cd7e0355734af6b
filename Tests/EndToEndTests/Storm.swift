import Foundation
import Glibc
import RadioRelaySystem

/// Many HTTP clients at once on nonblocking sockets, one thread: each connects from one of `sources` loopback
/// addresses, sends `request`, and is done at its answer's status line (then closed), or at the deadline.
enum Storm {
    static func run(port: UInt16, count: Int, sources: Int, request: String, deadline seconds: Double) -> [(
        status: Int, seconds: Double
    )] {
        let start = Date()
        var fds: [Int32] = []
        var results = [(status: Int, seconds: Double)](repeating: (0, .infinity), count: count)
        var sent = [Bool](repeating: false, count: count)
        var heads = [[UInt8]](repeating: [], count: count)
        for index in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            let source = SocketAddress(host: "127.0.0.\(2 + index % sources)", port: 0)!
            _ = source.withSockaddr { bind(fd, $0, $1) }
            _ = SocketAddress(host: "127.0.0.1", port: port)!.withSockaddr { connect(fd, $0, $1) }
            fds.append(fd)
        }
        defer { for fd in fds where fd >= 0 { close(fd) } }
        let bytes = Array(request.utf8)
        var open = count
        while open > 0 && Date().timeIntervalSince(start) < seconds {
            var polls = fds.enumerated().compactMap { index, fd -> pollfd? in
                fd < 0 ? nil : pollfd(fd: fd, events: Int16(sent[index] ? POLLIN : POLLOUT), revents: 0)
            }
            let indices = fds.indices.filter { fds[$0] >= 0 }
            guard poll(&polls, nfds_t(polls.count), 100) >= 0 else { break }
            for (slot, index) in indices.enumerated() where polls[slot].revents != 0 {
                let fd = fds[index]
                if !sent[index] {
                    sent[index] =
                        bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
                    if !sent[index] { finish(index, status: -1) }
                    continue
                }
                var buffer = [UInt8](repeating: 0, count: 512)
                let n = read(fd, &buffer, buffer.count)
                if n > 0 { heads[index] += buffer[..<n] }
                if let end = heads[index].firstIndex(of: 0x0D) {
                    let line = String(decoding: heads[index][..<end], as: UTF8.self)
                    finish(index, status: line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? -2)
                } else if n <= 0 && errno != EAGAIN {
                    finish(index, status: -3)
                }
            }
        }
        return results

        func finish(_ index: Int, status: Int) {
            results[index] = (status, Date().timeIntervalSince(start))
            close(fds[index])
            fds[index] = -1
            open -= 1
        }
    }
}
