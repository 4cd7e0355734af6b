import RadioRelayMedia
import RadioRelaySystem

/// Reading an HTTP/1.x request head from the bytes received so far, as a pure function (the status endpoint's only
/// parser of network input; tests: `StatusHTTPTests`).
///
/// Contract: never traps, whatever the bytes; looks at no more than `limit` bytes; decides as early as it can —
/// a malformed request line is refused as soon as its line feed arrives, not after a timeout. Lines end in CRLF or
/// a bare LF (RFC 9112 §2.2); empty lines before the request line are skipped. Header fields are checked for shape
/// (a token name, a colon, no control characters but tab in the value, no obsolete line folding) and kept, with
/// lowercased names and trimmed values (within the limit, so their number is bounded too). Both HTTP servers use
/// it: the status endpoint closes every connection after one answer; the public front end keeps one for more HLS
/// requests when the request allows it.
///
/// Framing (RFC 9112 §6.3, §3.2): the servers take no request bodies, so a head that announces one (`hasBody`:
/// `Content-Length` above 0, or any `Transfer-Encoding`) never keeps its connection for another request — its body
/// is never read as the next request. `Content-Length` fields that disagree or are not numbers, `Content-Length` beside
/// `Transfer-Encoding`, and more than one `Host` are malformed (400). A target in absolute form
/// (`http://host/path`) is accepted: its path is used, and its authority stands for `Host` (`host`).
package enum HTTPRequestHead {
    package struct Field: Equatable, Sendable {
        /// Lowercased (field names are case-insensitive).
        package var name: String
        /// Without the spaces and tabs around it.
        package var value: String
    }

    package struct Request: Equatable, Sendable {
        package var method: String
        /// The target's path, without the query (`/metrics?x=1` → `/metrics`).
        package var path: String
        /// `HTTP/1.0` or `HTTP/1.1`.
        package var version: String
        package var fields: [Field] = []
        /// The authority of a target in absolute form (`GET http://host:8000/x HTTP/1.1` → `host:8000`).
        package var authority: String?
        /// The target's query, without its `?` (nil: none): read only where a request is about it (`/admin/`).
        package var query: String?

        package init(method: String, path: String, version: String, fields: [Field] = [], authority: String? = nil) {
            self.method = method
            self.path = path
            self.version = version
            self.fields = fields
            self.authority = authority
        }

        /// The first value of the field `name` (lowercase), if the request has it.
        package func field(_ name: String) -> String? {
            fields.first { $0.name == name }?.value
        }

        /// The host the request names: an absolute-form target's authority, else its `Host` field (RFC 9112 §3.2.2).
        package var host: String? { authority ?? field("host") }

        /// Whether a body follows the head (`Content-Length` above 0, or a `Transfer-Encoding`).
        package var hasBody: Bool {
            if field("transfer-encoding") != nil { return true }
            return fields.contains { field in
                field.name == "content-length" && field.value.contains { $0 != "0" && $0 != "," && $0 != " " }
            }
        }
    }

    package enum Result: Equatable, Sendable {
        /// More bytes are needed.
        case incomplete
        case request(Request)
        /// Answered with 400 Bad Request (the reason is for tests and debug logs).
        case malformed(String)
        /// `limit` bytes without the end of the request line (414 URI Too Long).
        case requestLineTooLong
        /// `limit` bytes without the end of the head (431 Request Header Fields Too Large).
        case headTooLarge
    }

    package static func parse(_ bytes: [UInt8], limit: Int) -> Result {
        let window = bytes.prefix(max(0, limit))
        var index = window.startIndex
        // Empty lines before the request line (RFC 9112 §2.2).
        while index < window.endIndex, window[index] == cr || window[index] == lf { index += 1 }
        guard let requestEnd = window[index...].firstIndex(of: lf) else {
            return bytes.count >= limit ? .requestLineTooLong : .incomplete
        }
        var request: Request
        switch requestLine(trimmed(window[index..<requestEnd])) {
        case .success(let parsed): request = parsed
        case .failure(let problem): return .malformed(problem.reason)
        }
        var lineStart = requestEnd + 1
        while let lineEnd = window[lineStart...].firstIndex(of: lf) {
            let line = trimmed(window[lineStart..<lineEnd])
            if line.isEmpty {
                if let problem = framingProblem(request) { return .malformed(problem) }
                return .request(request)
            }
            if let problem = fieldProblem(line) { return .malformed(problem) }
            request.fields.append(field(line))
            lineStart = lineEnd + 1
        }
        return bytes.count >= limit ? .headTooLarge : .incomplete
    }

    private struct Problem: Error {
        var reason: String
    }

    package static let cr = UInt8(ascii: "\r")
    package static let lf = UInt8(ascii: "\n")
    private static let space = UInt8(ascii: " ")

    package static func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        line.last == cr ? line.dropLast() : line
    }

    private static func requestLine(_ line: ArraySlice<UInt8>) -> Swift.Result<Request, Problem> {
        let parts = line.split(separator: space, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(Problem(reason: "request line is not METHOD TARGET VERSION")) }
        let method = parts[0]
        let target = parts[1]
        let version = parts[2]
        guard (1...32).contains(method.count), method.allSatisfy(isTokenByte) else {
            return .failure(Problem(reason: "bad method"))
        }
        guard target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(Problem(reason: "a control character or space in the target"))
        }
        guard version.elementsEqual("HTTP/1.1".utf8) || version.elementsEqual("HTTP/1.0".utf8) else {
            return .failure(Problem(reason: "not HTTP/1.0 or HTTP/1.1"))
        }
        var origin = target
        var authority: String?
        if let (host, rest) = absoluteForm(target) {
            authority = String(decoding: host, as: UTF8.self)
            origin = rest
        } else if target.elementsEqual("*".utf8) && method.elementsEqual("OPTIONS".utf8) {
            origin = target  // asterisk form: the server itself (RFC 9112 §3.2.4)
        } else if target.first != UInt8(ascii: "/") {
            return .failure(Problem(reason: "the target is neither an absolute path nor an absolute URI"))
        }
        let path = origin.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        var request = Request(
            method: String(decoding: method, as: UTF8.self),
            path: path.isEmpty ? "/" : String(decoding: path, as: UTF8.self),
            version: String(decoding: version, as: UTF8.self), authority: authority)
        let rest = origin[path.endIndex...]
        if rest.first == UInt8(ascii: "?") {
            request.query = String(decoding: rest.dropFirst().prefix { $0 != UInt8(ascii: "#") }, as: UTF8.self)
        }
        return .success(request)
    }

    /// `http://AUTHORITY/rest` or `https://…` (scheme in any case): the authority (a plain host[:port], no userinfo,
    /// not empty) and the rest of the target (empty: `/`); nil when the target is not in absolute form.
    private static func absoluteForm(_ target: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, ArraySlice<UInt8>)? {
        let lower = target.prefix(8).map { $0 | 0x20 }
        let scheme: Int
        if lower.starts(with: "http://".utf8) {
            scheme = 7
        } else if lower.starts(with: "https://".utf8) {
            scheme = 8
        } else {
            return nil
        }
        let afterScheme = target.dropFirst(scheme)
        let end = afterScheme.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? afterScheme.endIndex
        let host = afterScheme[..<end]
        guard !host.isEmpty, host.allSatisfy(isAuthorityByte) else { return nil }
        return (host, afterScheme[end...])
    }

    /// A byte of a plain `host[:port]` authority: a name, an IPv4 literal, or a bracketed IPv6 literal.
    private static func isAuthorityByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~:[]%".utf8.contains(byte)
        }
    }

    /// Why the head's framing is refused (400), or nil: more than one `Host`, `Content-Length` values that are not
    /// numbers or disagree (a list of equal values is one value, RFC 9110 §8.6), or a length beside a
    /// `Transfer-Encoding` (a request that could be read two ways).
    private static func framingProblem(_ request: Request) -> String? {
        if request.fields.lazy.filter({ $0.name == "host" }).count > 1 { return "more than one Host field" }
        var length: Substring?
        for field in request.fields where field.name == "content-length" {
            for value in field.value.split(separator: ",", omittingEmptySubsequences: false) {
                var number = value
                while let first = number.first, first == " " || first == "\t" { number = number.dropFirst() }
                while let last = number.last, last == " " || last == "\t" { number = number.dropLast() }
                guard (1...18).contains(number.utf8.count), number.utf8.allSatisfy({ (0x30...0x39).contains($0) })
                else { return "a Content-Length that is not a number" }
                if let length, length != number { return "Content-Length fields that differ" }
                length = number
            }
        }
        if length != nil && request.field("transfer-encoding") != nil {
            return "Content-Length beside Transfer-Encoding"
        }
        return nil
    }

    /// Why a header line is malformed, or nil.
    package static func fieldProblem(_ line: ArraySlice<UInt8>) -> String? {
        if line.first == space || line.first == UInt8(ascii: "\t") { return "obsolete line folding" }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
            return "header line without a name and colon"
        }
        guard line[..<colon].allSatisfy(isTokenByte) else { return "bad header name" }
        let value = line[(colon + 1)...]
        if value.contains(where: { ($0 < 0x20 && $0 != UInt8(ascii: "\t")) || $0 == 0x7F }) {
            return "control character in a header value"
        }
        return nil
    }

    /// A header line already checked by `fieldProblem`, as a name and a value.
    private static func field(_ line: ArraySlice<UInt8>) -> Field {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return Field(name: "", value: "") }
        let isBlank = { (byte: UInt8) in byte == space || byte == UInt8(ascii: "\t") }
        var value = line[(colon + 1)...]
        while let first = value.first, isBlank(first) { value = value.dropFirst() }
        while let last = value.last, isBlank(last) { value = value.dropLast() }
        return Field(
            name: String(decoding: line[..<colon], as: UTF8.self).lowercased(),
            value: String(decoding: value, as: UTF8.self))
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension HTTPRequestHead.Result {
    /// What both routers do first (the status endpoint's and the public front end's): the request, or the answer to
    /// a head that is none — 400 (malformed, or cut short), 414 (request line too long), 431 (head too large) —
    /// worded by the router's `text`.
    package func opening(_ text: (Int, String) -> HTTPResponse) -> HTTPRequestHead.Opening {
        switch self {
        case .incomplete, .malformed: .answer(text(400, "bad request\n"))
        case .requestLineTooLong: .answer(text(414, "request line too long\n"))
        case .headTooLarge: .answer(text(431, "request header too large\n"))
        case .request(let request): .request(request)
        }
    }
}

extension HTTPRequestHead {
    /// A router's start: a request to route, or the answer already decided.
    package enum Opening {
        case request(Request)
        case answer(HTTPResponse)
    }
}
