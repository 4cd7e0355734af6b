import CLinux
import Foundation
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// A real HTTP/1.0 server on 127.0.0.1 for the tests: one thread, one response per connection, chosen by a route
/// function of the request path. Bodies can be sent at a limited pace (bytes per second) to act as a live upstream.
package final class HTTPTestServer: @unchecked Sendable {
    package struct Response {
        package var status = 200
        package var headers: [String: String] = [:]
        package var body: [UInt8] = []
        /// Bytes per second; nil sends as fast as possible.
        package var pace: Int? = nil
        /// With a pace: this many bytes go out at once first (Icecast's burst on connect), the rest at the pace.
        package var burst = 0
        /// Send the body this many times (a looping live stream).
        package var repeats = 1
        /// Seconds to keep the connection open, silent, after the body (a stalled upstream).
        package var holdOpen = 0.0
        /// The whole status line instead of `HTTP/1.0 <status> X` (SHOUTcast v1 answers `ICY 200 OK`).
        package var statusLine: String? = nil

        package init(
            status: Int = 200, headers: [String: String] = [:], body: [UInt8] = [], pace: Int? = nil,
            repeats: Int = 1, holdOpen: Double = 0, statusLine: String? = nil
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.pace = pace
            self.burst = 0
            self.repeats = repeats
            self.holdOpen = holdOpen
            self.statusLine = statusLine
        }
    }

    package let port: UInt16
    private let listener: Int32
    private let route: @Sendable (String) -> Response
    private let stopped = ManagedFlag()
    /// Signalled when the accept loop has returned: only then may the listening descriptor be closed (closed
    /// earlier, its number could be reused by another test's socket while this loop still calls accept on it).
    private let acceptDone = DispatchSemaphore(value: 0)
    /// `stop` runs once: a second close would close a number someone else may own by then.
    private let stopOnce = NSLock()
    private var isStopped = false

    package init(route: @escaping @Sendable (String) -> Response) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = SocketAddress(host: "127.0.0.1", port: 0)!.withSockaddr { bind(fd, $0, $1) }
        precondition(bound == 0, "bind: \(errno)")
        listen(fd, 64)
        port = SocketAddress(localOf: fd)!.port
        listener = fd
        self.route = route
        let thread = Thread { [self] in
            acceptLoop()
            acceptDone.signal()
        }
        thread.start()
    }

    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Stops accepting and closes the listening socket once the accept loop has left it; safe to call twice.
    package func stop() {
        stopOnce.lock()
        defer { stopOnce.unlock() }
        guard !isStopped else { return }
        isStopped = true
        stopped.set()
        shutdown(listener, Int32(SHUT_RDWR))
        _ = acceptDone.wait(timeout: .now() + 10)
        close(listener)
    }

    private func acceptLoop() {
        while !stopped.isSet {
            let client = accept(listener, nil, nil)
            if client < 0 { if stopped.isSet { return } else { continue } }
            let route = self.route
            let stopped = self.stopped
            Thread { Self.serve(client, route: route, stopped: stopped) }.start()
        }
    }

    private static func serve(_ fd: Int32, route: (String) -> Response, stopped: ManagedFlag) {
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !request.containsHeaderEnd {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { return }
            request += chunk[0..<n]
            if request.count > 65536 { return }
        }
        let line = String(decoding: request.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let parts = line.split(separator: " ")
        let path = parts.count > 1 ? String(parts[1]) : "/"
        let response = route(path)
        var head = (response.statusLine ?? "HTTP/1.0 \(response.status) X") + "\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        if response.pace == nil && response.repeats == 1 && response.holdOpen == 0 {
            head += "Content-Length: \(response.body.count)\r\n"
        }
        head += "\r\n"
        guard writeAll(fd, Array(head.utf8)) else { return }
        let started = Date()
        var sent = 0
        for _ in 0..<response.repeats {
            var offset = 0
            while offset < response.body.count {
                if stopped.isSet { return }
                let piece = min(response.body.count - offset, response.pace.map { max(1, $0 / 50) } ?? 65536)
                guard writeAll(fd, Array(response.body[offset..<offset + piece])) else { return }
                offset += piece
                sent += piece
                if let pace = response.pace {
                    let due = Double(max(0, sent - response.burst)) / Double(pace) - Date().timeIntervalSince(started)
                    if due > 0 { usleep(UInt32(due * 1_000_000)) }
                }
            }
        }
        let until = Date().addingTimeInterval(response.holdOpen)
        while Date() < until && !stopped.isSet { usleep(50_000) }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }
}

/// A flag set once from any thread.
package final class ManagedFlag: @unchecked Sendable {
    private var value = false
    private let lock = NSLock()
    package init() {}
    package func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
    package var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

extension Array where Element == UInt8 {
    package var containsHeaderEnd: Bool {
        guard count >= 4 else { return false }
        for i in 0...(count - 4) where self[i] == 13 && self[i + 1] == 10 && self[i + 2] == 13 && self[i + 3] == 10 {
            return true
        }
        return false
    }
}
