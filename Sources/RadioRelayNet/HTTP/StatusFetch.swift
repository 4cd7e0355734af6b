import Foundation
import Glibc
import RadioRelaySystem

/// One `GET` to a status endpoint, blocking (a command-line tool, not the server), within one overall deadline of
/// `timeout` seconds from the name's resolution to the answer's last byte (a server that drips a byte every few
/// seconds cannot keep the command running), at most 16 MiB.
package enum StatusFetch {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// The whole exchange's deadline, in seconds.
    package static let timeout = 5.0

    package static func get(host: String, port: Int, path: String, token: String?, timeout: Double = timeout)
        throws(Failure)
        -> (status: Int, body: [UInt8])
    {
        let deadline = monotonicNow() + timeout
        let late = Failure(description: "no complete answer within \(Int(timeout)) s")
        /// Each blocking call waits at most what is left of the deadline.
        func limit(_ fd: Int32) throws(Failure) {
            let left = deadline - monotonicNow()
            guard left > 0 else { throw late }
            let seconds = left.rounded(.down)
            var value = timeval(tv_sec: Int(min(seconds, 3_600)), tv_usec: Int(min(left - seconds, 1) * 999_999))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, "\(port)", &hints, &list) == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        try limit(fd)
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            if errno == EINPROGRESS || errno == EAGAIN { throw late }
            throw Failure(description: "connect: \(String(cString: strerror(errno)))")
        }
        let hostField = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var request = "GET \(path) HTTP/1.1\r\nHost: \(hostField)\r\nConnection: close\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        request += "User-Agent: radio-relay-status/\(RadioRelayVersion.string)\r\n\r\n"
        let bytes = Array(request.utf8)
        try limit(fd)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw Failure(description: "send: \(String(cString: strerror(errno)))")
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while answer.count < 16 << 20 {
            try limit(fd)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { break }
            guard n > 0 else {
                if errno == EINTR { continue }
                if errno == EAGAIN { throw late }
                throw Failure(description: String(cString: strerror(errno)))
            }
            answer += buffer[0..<n]
        }
        let separator = Array("\r\n\r\n".utf8)
        guard let end = (0..<max(0, answer.count - 3)).first(where: { answer[$0..<$0 + 4].elementsEqual(separator) })
        else { throw Failure(description: "no HTTP answer") }
        let head = String(decoding: answer[..<end], as: UTF8.self)
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, Array(answer[(end + 4)...]))
    }
}
