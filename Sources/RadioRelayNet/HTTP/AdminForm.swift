import RadioRelaySystem

/// A form posted to the admin page (`POST /admin/`), as pure functions (tests: `AdminFormTests`): how long its body
/// is allowed to be, its fields (`application/x-www-form-urlencoded`, read by bytes by the same reader as an admin
/// call's query, `SourceRules.parameters`), and what it asks — an admin call with the same fields as in the API
/// (`kill` is `/admin/killclient`, `move` `/admin/moveclients`, `killsource`, `metadata`), or a station command
/// (`force`, `release`, as the status endpoint's).
package enum AdminForm {
    /// The largest body taken: a form of the page is a few hundred bytes (a title is at most 1 KiB of text, three
    /// times that percent-encoded).
    package static let maxBytes = 8192
    package static let contentType = "application/x-www-form-urlencoded"

    /// What a form asks.
    package enum Action: Equatable, Sendable {
        /// An admin call, answered by the API's code (`HTTPFrontLoop.perform`).
        case call(AdminCall)
        /// A command for the station of this name.
        case station(String, StationCommand)
        /// Not a form of the page: why.
        case invalid(String)
    }

    /// A form whose body is still coming (the front end's, by descriptor).
    package struct Wait {
        var request: HTTPRequestHead.Request
        var length: Int
        var body: [UInt8]
    }

    /// How a request's body is framed, for the form's reading.
    package enum Body: Equatable, Sendable {
        case length(Int)
        /// Over `maxBytes`: 413.
        case tooLarge
        /// A `Transfer-Encoding` (chunked): 411, a form needs a length.
        case unframed
        /// Not a form's type: 415.
        case notForm
    }

    /// The body a form's head announces. `Content-Length` was checked by the head's parser (digits, values that
    /// agree); none is an empty body.
    package static func body(_ request: HTTPRequestHead.Request) -> Body {
        let type = request.field("content-type")?.lowercased() ?? ""
        guard type == contentType || type.hasPrefix(contentType + ";") else { return .notForm }
        if request.field("transfer-encoding") != nil { return .unframed }
        guard let field = request.field("content-length") else { return .length(0) }
        let first = field.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).first ?? []
        let digits = first.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        // At most 18 digits (the parser's bound): no overflow; anything over the limit is refused before a byte of
        // the body is kept.
        guard digits.count <= 18 else { return .tooLarge }
        var length = 0
        for digit in digits {
            guard (0x30...0x39).contains(digit) else { return .tooLarge }
            length = length * 10 + Int(digit - 0x30)
        }
        return length <= maxBytes ? .length(length) : .tooLarge
    }

    /// The fields of a body (nil: over `maxBytes`).
    package static func fields(_ body: some Collection<UInt8>) -> [String: [UInt8]]? {
        guard body.count <= maxBytes else { return nil }
        return SourceRules.parameters(bytes: body)
    }

    /// What the form asks.
    package static func action(_ fields: [String: [UInt8]]) -> Action {
        func text(_ key: String) -> String? {
            guard let bytes = fields[key], !bytes.isEmpty else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
        func call(_ command: AdminCall.Command) -> Action {
            guard var call = AdminCall.parse(path: "/admin/" + command.rawValue, parameters: fields) else {
                return .invalid("not an admin call")
            }
            // The page reads its answers itself: their words, not a format.
            call.format = .xml
            guard call.mount != nil else { return .invalid("the form names no mount") }
            return .call(call)
        }
        switch text("action") {
        case "kill": return call(.killclient)
        case "move": return call(.moveclients)
        case "killsource": return call(.killsource)
        case "metadata": return call(.metadata)
        case "force":
            guard let station = text("station"), let input = text("input") else {
                return .invalid("the form names no station or input")
            }
            return .station(station, .force(input: input))
        case "release":
            guard let station = text("station") else { return .invalid("the form names no station") }
            return .station(station, .release)
        default:
            return .invalid("the form asks for nothing this page does")
        }
    }
}
