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
/// it: they serve requests without a body and close every connection after one response.
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

        /// The first value of the field `name` (lowercase), if the request has it.
        package func field(_ name: String) -> String? {
            fields.first { $0.name == name }?.value
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
            if line.isEmpty { return .request(request) }
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
        guard target.first == UInt8(ascii: "/"), target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(Problem(reason: "the target is not an absolute path"))
        }
        guard version.elementsEqual("HTTP/1.1".utf8) || version.elementsEqual("HTTP/1.0".utf8) else {
            return .failure(Problem(reason: "not HTTP/1.0 or HTTP/1.1"))
        }
        let path = target.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        return .success(
            Request(
                method: String(decoding: method, as: UTF8.self), path: String(decoding: path, as: UTF8.self),
                version: String(decoding: version, as: UTF8.self)))
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

/// Where a request head received in pieces stands, so that `HTTPRequestHead.parse` runs only when it can decide:
/// once when the request line ends (a malformed one is refused at once), when a header line ends malformed (the
/// same), once when the head's empty line comes, or at the size limit. Each byte is looked at once here, so the work
/// for a head is linear in its bytes however it is cut into reads — re-parsing from the start on every read would be
/// quadratic in the number of header lines.
package struct HTTPHeadScan: Sendable {
    private var scanned = 0
    private var lineStart = 0
    private var sawRequestLine = false

    package init() {}

    /// Bytes looked at so far: once `shouldParse` said yes at the end of a head, the head's length.
    package var scannedBytes: Int { scanned }

    /// Looks at the bytes of `bytes` after those seen before (up to `limit`); true when a parse can decide now.
    package mutating func shouldParse(_ bytes: [UInt8], limit: Int) -> Bool {
        let end = min(bytes.count, max(0, limit))
        var decide = false
        var index = scanned
        while index < end {
            let byte = bytes[index]
            if !sawRequestLine && index == lineStart && (byte == HTTPRequestHead.cr || byte == HTTPRequestHead.lf) {
                lineStart = index + 1  // empty lines before the request line, skipped as `parse` skips them
            } else if byte == HTTPRequestHead.lf {
                let line = HTTPRequestHead.trimmed(bytes[lineStart..<index])
                if !sawRequestLine {
                    sawRequestLine = true
                    decide = true  // the request line, checked at once
                } else if line.isEmpty || HTTPRequestHead.fieldProblem(line) != nil {
                    // The end of the head, or a malformed header line, refused at once as a whole head would be.
                    scanned = index + 1
                    return true
                }
                lineStart = index + 1
            }
            index += 1
        }
        scanned = end
        return decide || bytes.count >= limit
    }

}
