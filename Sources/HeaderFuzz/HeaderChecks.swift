import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

// The checks behind the header fuzz target (HeaderFuzz.swift lists the invariants), and the reference model.

/// The contract of `ResponseHeaders`, written again as plainly as possible, to compare with.
struct HeaderModel: Equatable {
    var fields: [String: String] = [:]
    var kept = 0
    var bytes = 0
    var ignored = 0
    var malformed = 0
    var responses = 0

    static let whitespace: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
    static let token = Set(Array("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8))

    mutating func take(_ line: [UInt8]) {
        var text = line
        while let last = text.last, Self.whitespace.contains(last) { text.removeLast() }
        if text.isEmpty { return }
        if text.starts(with: Array("HTTP/".utf8)) || text.starts(with: Array("ICY ".utf8)) {
            self = HeaderModel(responses: responses + 1)
            return
        }
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else {
            malformed += 1
            return
        }
        var rawName = Array(text[..<colon])
        while let last = rawName.last, last == 0x20 || last == 0x09 { rawName.removeLast() }
        guard !rawName.isEmpty, rawName.allSatisfy(Self.token.contains) else {
            malformed += 1
            return
        }
        let name = String(decoding: rawName, as: UTF8.self).lowercased()
        let value = ICYDemuxer.decodeText(Array(text[(colon + 1)...].drop(while: Self.whitespace.contains)))
        let size = Array(name.utf8).count + Array(value.utf8).count
        guard kept < 100, bytes + size <= 65_536 else {
            ignored += 1
            return
        }
        kept += 1
        bytes += size
        fields[name] = value
    }
}

extension HeaderModel {
    init(responses: Int) { self.responses = responses }

    init(_ headers: ResponseHeaders) {
        self.init(
            fields: headers.fields, kept: headers.keptLines, bytes: headers.keptBytes, ignored: headers.ignored,
            malformed: headers.malformed, responses: headers.responses)
    }
}

/// The input's lines as libcurl hands them over: split after each LF, terminators kept.
func lines(_ input: [UInt8]) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var start = 0
    for (i, byte) in input.enumerated() where byte == 0x0A {
        result.append(Array(input[start...i]))
        start = i + 1
    }
    if start < input.count { result.append(Array(input[start...])) }
    return result
}

func feed(_ lines: [[UInt8]]) -> ResponseHeaders {
    var headers = ResponseHeaders()
    for line in lines { line.withUnsafeBytes { headers.take($0) } }
    return headers
}

/// C0, DEL, C1 and the bidi controls: what no sanitized text may contain.
func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F, 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
}

func checkHeaders(_ input: [UInt8]) -> [String] {
    var failures: [String] = []
    let split = lines(input)
    let headers = feed(split)
    var model = HeaderModel()
    for line in split { model.take(line) }
    if HeaderModel(headers) != model {
        failures.append("result \(HeaderModel(headers)) differs from the model's \(model)")
    }
    for (name, value) in headers.fields {
        if name.isEmpty || !name.utf8.allSatisfy({ HeaderModel.token.contains($0) && !(0x41...0x5A).contains($0) }) {
            failures.append("name \(Array(name.utf8)) is not a lowercase token")
        }
        let bytes = Array(value.utf8)
        if let first = bytes.first, let last = bytes.last,
            HeaderModel.whitespace.contains(first) || HeaderModel.whitespace.contains(last)
        {
            failures.append("value of \(name) is not trimmed: \(bytes.prefix(40))")
        }
        if bytes.contains(0x0A) { failures.append("value of \(name) holds a LF") }
    }
    let size = headers.fields.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    if headers.fields.count > headers.keptLines || headers.keptLines > ResponseHeaders.maxLines
        || size > headers.keptBytes || headers.keptBytes > ResponseHeaders.maxBytes
    {
        failures.append(
            "\(headers.fields.count) fields, \(size) bytes: \(headers.keptLines) lines and \(headers.keptBytes) bytes kept"
        )
    }
    // Terminators do not matter.
    let bare = split.map { line in Array(line.reversed().drop { $0 == 0x0A || $0 == 0x0D }.reversed()) }
    for (label, variant) in [("without terminators", bare), ("with CR LF", bare.map { $0 + [0x0D, 0x0A] })] {
        let other = feed(variant)
        if other != headers { failures.append("\(label): \(HeaderModel(other)), LF gave \(HeaderModel(headers))") }
    }
    // Only the last response counts.
    if let last = bare.lastIndex(where: {
        var model = HeaderModel()
        model.take($0)
        return model.responses == 1
    }) {
        var fresh = HeaderModel(feed(Array(split[(last + 1)...])))
        fresh.responses = headers.responses
        if fresh != HeaderModel(headers) {
            failures.append("after the last status line: \(fresh), the whole gave \(HeaderModel(headers))")
        }
    }
    for text in [headers["icy-metaint"], String(decoding: input.prefix(200), as: UTF8.self)] {
        failures += checkMetaInterval(text)
    }
    return failures
}

func checkMetaInterval(_ text: String?) -> [String] {
    do {
        guard let value = try ResponseHeaders.icyMetaInterval(text) else {
            return text == nil ? [] : ["icy-metaint \(String(reflecting: text)) gave nil"]
        }
        let trimmed = text.map {
            String($0.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        }
        guard let trimmed, (1...65_535).contains(value), Int(trimmed) == value else {
            return ["icy-metaint \(String(reflecting: text)) gave \(value)"]
        }
    } catch {
        let prefix = "icy-metaint \""
        let suffix = "\" is not a whole number from 1 to 65535"
        let message = error.message
        // Compared by scalars: a value that starts with a combining mark joins the quote into one Character.
        let scalars = Array(message.unicodeScalars)
        guard scalars.starts(with: prefix.unicodeScalars),
            scalars.reversed().starts(with: suffix.unicodeScalars.reversed()),
            !message.unicodeScalars.contains(where: isUnsafe), message.count <= prefix.count + 41 + suffix.count
        else { return ["icy-metaint error: \(Array(message.unicodeScalars.map(\.value)))"] }
    }
    return []
}
