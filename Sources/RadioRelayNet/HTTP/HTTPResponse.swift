import RadioRelayMedia
import RadioRelaySystem

/// One HTTP/1.1 response, closing the connection unless it says to keep it.
package struct HTTPResponse: Equatable, Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]
    /// HEAD: the headers (Content-Length included) without the body.
    package var omitsBody = false
    /// A head made elsewhere, sent as it is instead of the above (a stream's head, answering HEAD).
    package var rawHead: [UInt8]?
    /// `Connection: keep-alive` instead of `close`: the connection waits for another request (HLS).
    package var keepAlive = false
    /// An admin answer's message in words (`Client 7 removed`), for the admin page's line after a form; not sent.
    package var summary: String?

    package init(status: Int, contentType: String, body: String) {
        self.status = status
        self.body = Array(body.utf8)
        headers = [("Content-Type", contentType), ("Cache-Control", "no-store")]
    }

    /// A body of bytes (shared, not copied: a segment's).
    package init(status: Int, contentType: String, bytes: [UInt8], headers: [(String, String)]) {
        self.status = status
        body = bytes
        self.headers = [("Content-Type", contentType)] + headers
    }

    package init(rawHead: [UInt8]) {
        self.init(status: 200, contentType: "", body: "")
        self.rawHead = rawHead
    }

    package static func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: body)
    }

    package static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body && lhs.omitsBody == rhs.omitsBody && lhs.rawHead == rhs.rawHead
            && lhs.keepAlive == rhs.keepAlive
            && lhs.headers.map { "\($0.0): \($0.1)" } == rhs.headers.map { "\($0.0): \($0.1)" }
    }

    package static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 416: "Range Not Satisfiable"
        case 415: "Unsupported Media Type"
        case 429: "Too Many Requests"
        case 501: "Not Implemented"
        case 414: "URI Too Long"
        case 421: "Misdirected Request"
        case 431: "Request Header Fields Too Large"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }

    /// The bytes on the wire.
    package var encoded: [UInt8] { encodedHead + payload }

    /// The head on the wire (the raw head if there is one).
    package var encodedHead: [UInt8] {
        if let rawHead { return rawHead }
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        // A 204 and a 304 have no body, and say nothing of its length (RFC 9110 §8.6).
        if status != 204 && status != 304 { head += "Content-Length: \(body.count)\r\n" }
        head += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        return Array(head.utf8)
    }

    /// The body on the wire: none for HEAD, 204, 304 or a raw head.
    package var payload: [UInt8] {
        rawHead != nil || omitsBody || status == 204 || status == 304 ? [] : body
    }
}
