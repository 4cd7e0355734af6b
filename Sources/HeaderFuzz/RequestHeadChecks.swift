import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

// The request-head half of the header fuzz target: the same input read as a client's request head by
// `HTTPRequestHead.parse` (both HTTP servers' parser), fed whole and in pieces through `HTTPHeadScan`, and routed by
// the public front end's `PublicRouter`.

/// Request heads are read with this limit (the servers' 8 KiB).
let requestLimit = 8192

/// A request head's field lines as a plain model reads them: the lines after the request line up to the first
/// empty one, as (lowercased name, trimmed value), or nil when the input has no complete head within the limit.
func modelFields(_ input: [UInt8]) -> [(String, String)]? {
    let window = Array(input.prefix(requestLimit))
    var lines: [[UInt8]] = []
    var current: [UInt8] = []
    for byte in window {
        if byte == 0x0A {
            if current.last == 0x0D { current.removeLast() }
            lines.append(current)
            current = []
        } else {
            current.append(byte)
        }
    }
    guard let requestLine = lines.firstIndex(where: { !$0.isEmpty }) else { return nil }
    // Empty lines before the request line are skipped, so a line of a lone CR counts as empty too.
    var fields: [(String, String)] = []
    for line in lines[(requestLine + 1)...] {
        if line.isEmpty { return fields }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return fields }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        fields.append((name, String(decoding: value, as: UTF8.self)))
    }
    return nil
}

/// Invariants of the request-head parser (HeaderFuzz.swift lists them).
func checkRequestHead(_ input: [UInt8]) -> [String] {
    var failures: [String] = []
    let whole = HTTPRequestHead.parse(input, limit: requestLimit)
    // The same decision from the first bytes on which the scan says a parse can decide, whatever the pieces.
    for piece in [1, 3, 64, 1000] {
        var scan = HTTPHeadScan()
        var received: [UInt8] = []
        var decided: HTTPRequestHead.Result = .incomplete
        var offset = 0
        while offset < input.count && decided == .incomplete && received.count < requestLimit {
            let end = min(input.count, offset + piece)
            received += input[offset..<end]
            offset = end
            if scan.shouldParse(received, limit: requestLimit) {
                decided = HTTPRequestHead.parse(received, limit: requestLimit)
            }
        }
        if case .request = whole, decided != whole {
            failures.append("in pieces of \(piece): \(decided), whole: \(whole)")
        }
        if case .request = decided, decided != whole {
            failures.append("in pieces of \(piece) a request was decided that the whole is not: \(decided), \(whole)")
        }
    }
    guard case .request(let request) = whole else { return failures }
    // The shape of what is accepted.
    if !(request.path.hasPrefix("/") || (request.path == "*" && request.method == "OPTIONS")) {
        failures.append("path \(Array(request.path.utf8).prefix(40)) is neither absolute nor OPTIONS *")
    }
    if let authority = request.authority, authority.isEmpty || authority.contains("@") || authority.contains("/") {
        failures.append("authority \(Array(authority.utf8).prefix(40)) is not a plain host[:port]")
    }
    for field in request.fields where field.name.isEmpty || field.name != field.name.lowercased() {
        failures.append("field name \(Array(field.name.utf8).prefix(40)) is not a lowercase token")
    }
    // Framing, against the plain model of the field lines.
    if let fields = modelFields(input) {
        if fields.filter({ $0.0 == "host" }).count > 1 { failures.append("two Host fields accepted") }
        let lengths = fields.filter { $0.0 == "content-length" }.flatMap { field in
            field.1.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
            }
        }.map { String($0) }
        if Set(lengths).count > 1 { failures.append("Content-Length values that differ accepted: \(lengths)") }
        if lengths.contains(where: { $0.isEmpty || !$0.utf8.allSatisfy { (0x30...0x39).contains($0) } }) {
            failures.append("a Content-Length that is not a number accepted: \(lengths)")
        }
        let chunked = fields.contains { $0.0 == "transfer-encoding" }
        if chunked && !lengths.isEmpty { failures.append("Content-Length beside Transfer-Encoding accepted") }
        let announcesBody = chunked || lengths.contains { $0.contains { $0 != "0" } }
        if announcesBody != request.hasBody { failures.append("hasBody \(request.hasBody), model \(announcesBody)") }
    } else {
        failures.append("a request was accepted where the model finds no complete head")
    }
    // A request with a body never keeps its connection on the public front end (its body is not a request).
    if request.hasBody, case .respond(let response) = PublicRouter.route(whole, directory: fuzzDirectory, now: 0),
        response.keepAlive
    {
        failures.append("a request with a body keeps its connection: \(response.status)")
    }
    return failures
}

/// One Ogg mount and one MP3 mount, with their HLS directories.
let fuzzDirectory: PublicDirectory = {
    var directory = PublicDirectory()
    var info = StationInfo()
    info.displayName = "Fuzz"
    var mp3 = PublicDirectory.Mount(path: "/main.mp3", eventsPath: "/main.mp3/events", station: "main", title: "a")
    mp3.format = .mp3
    directory.mounts = [
        PublicDirectory.Mount(
            path: "/main.opus", eventsPath: "/main/events", station: "main", info: info, title: "a", bitrate: 96_000),
        mp3,
    ]
    return directory
}()
