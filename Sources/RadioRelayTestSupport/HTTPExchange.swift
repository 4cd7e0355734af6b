import Foundation

/// One HTTP answer read whole from a raw socket: the status, the head as text, the body, and whether the server
/// closed the connection.
package struct HTTPAnswer {
    package var status: Int
    package var head: String
    package var body: [UInt8]
    package var closed: Bool
    package var text: String { String(decoding: body, as: UTF8.self) }
}

/// Sends `request` raw to 127.0.0.1:`port` and reads until the server closes (or `wait` seconds).
package func httpFetch(_ port: UInt16, _ request: String, wait: Double = 5) throws -> HTTPAnswer {
    let client = try ListenerClient(port: port)
    defer { client.close() }
    client.send(request)
    let (bytes, closed) = client.read(for: wait)
    let separator = Array("\r\n\r\n".utf8)
    let end = (0..<max(0, bytes.count - 3)).first { Array(bytes[$0..<$0 + 4]) == separator } ?? bytes.count
    let head = String(decoding: bytes[..<end], as: UTF8.self)
    let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return HTTPAnswer(status: status, head: head, body: Array(bytes[min(bytes.count, end + 4)...]), closed: closed)
}

/// `GET path` with a Host header, read until the server closes (or 5 s).
package func httpGet(_ port: UInt16, _ path: String) throws -> HTTPAnswer {
    try httpFetch(port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
}

/// Sends `request`, reads for `seconds` (a stream does not end); the response head (as text) and the body.
package func httpExchange(_ port: UInt16, _ request: String, seconds: Double) throws -> (
    head: String, body: [UInt8], closed: Bool
) {
    let client = try ListenerClient(port: port)
    defer { client.close() }
    client.send(request)
    let (bytes, closed) = client.read(for: seconds)
    let separator = Array("\r\n\r\n".utf8)
    guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
        return (String(decoding: bytes, as: UTF8.self), [], closed)
    }
    return (String(decoding: bytes[..<end], as: UTF8.self), Array(bytes[(end + 4)...]), closed)
}
