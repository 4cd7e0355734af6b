import RadioRelayMedia
import RadioRelaySystem

/// One HTTP/1.1 response, closing the connection.
package struct HTTPResponse: Equatable, Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]
    /// HEAD: the headers (Content-Length included) without the body.
    package var omitsBody = false
    /// A head made elsewhere, sent as it is instead of the above (a stream's head, answering HEAD).
    package var rawHead: [UInt8]?

    package init(status: Int, contentType: String, body: String) {
        self.status = status
        self.body = Array(body.utf8)
        headers = [("Content-Type", contentType), ("Cache-Control", "no-store")]
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
            && lhs.headers.map { "\($0.0): \($0.1)" } == rhs.headers.map { "\($0.0): \($0.1)" }
    }

    package static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 414: "URI Too Long"
        case 421: "Misdirected Request"
        case 431: "Request Header Fields Too Large"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }

    /// The bytes on the wire.
    package var encoded: [UInt8] {
        if let rawHead { return rawHead }
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        // A 204 has no body, and says nothing of its length (RFC 9110 §8.6).
        if status != 204 { head += "Content-Length: \(body.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + (omitsBody || status == 204 ? [] : body)
    }
}
