/// Reads the fields of one line in order; `failure` says what was wrong.
struct AccessLogCursor {
    let bytes: ArraySlice<UInt8>
    var index: Int
    var failure = ""

    init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    private static let space = UInt8(ascii: " ")
    private static let quote = UInt8(ascii: "\"")

    mutating func listener() -> AccessLogLine? {
        guard let address = token(limit: 256), !address.isEmpty else { return fail("no address") }
        guard let identity = token(limit: 64) else { return fail("no identity field") }
        var session: SessionKey?
        if !identity.elementsEqual("-".utf8) {
            guard let key = Self.sessionKey(identity) else { return fail("the identity field is neither - nor RUN-ID") }
            session = key
        }
        guard token(limit: 1024) != nil else { return fail("no user field") }
        guard let leave = date() else { return fail(failure.isEmpty ? "bad date" : failure) }
        guard take(" "), let request = quoted() else { return fail("no quoted request") }
        guard take(" "), let status = number(), (100...599).contains(status) else { return fail("bad status") }
        guard take(" ") else { return fail("no bytes field") }
        let sent: Int64
        if take("-") {
            sent = 0
        } else {
            guard let count = number() else { return fail("bad bytes field") }
            sent = count
        }
        guard take(" "), quoted(keeping: false) != nil else { return fail("no quoted referrer") }
        guard take(" "), let agent = quoted() else { return fail("no quoted user agent") }
        guard take(" "), let seconds = number() else { return fail("bad seconds field") }
        guard index == bytes.endIndex else { return fail("more after the seconds") }
        guard seconds <= leave else { return fail("connected since before 1970") }
        return AccessLogLine(
            address: String(decoding: address, as: UTF8.self), session: session, leave: leave,
            request: String(decoding: request, as: UTF8.self), status: Int(status), bytes: sent,
            userAgent: String(decoding: agent, as: UTF8.self), seconds: seconds)
    }

    private mutating func fail<T>(_ reason: String) -> T? {
        failure = reason
        return nil
    }

    /// `5f3a09c1-42`: eight hex digits, a dash, a listener ID (1 to 20 decimal digits that fit 64 bits, as
    /// `ListenerID` reads it).
    static func sessionKey(_ text: ArraySlice<UInt8>) -> SessionKey? {
        guard text.count > 9, text.count <= 29, text[text.startIndex + 8] == UInt8(ascii: "-") else { return nil }
        var run: UInt32 = 0
        for byte in text.prefix(8) {
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x61...0x66: digit = byte - 0x61 + 10
            case 0x41...0x46: digit = byte - 0x41 + 10
            default: return nil
            }
            run = run << 4 | UInt32(digit)
        }
        var id: UInt64 = 0
        for byte in text.dropFirst(9) {
            guard (0x30...0x39).contains(byte) else { return nil }
            let (times, overflow) = id.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(byte - 0x30))
            guard !overflow, !carry else { return nil }
            id = sum
        }
        return SessionKey(run: run, id: id)
    }

    /// The bytes up to the next space (which is taken), at most `limit`; nil at the end of the line.
    mutating func token(limit: Int) -> ArraySlice<UInt8>? {
        let rest = bytes[index...]
        guard let space = rest.firstIndex(of: Self.space), space - index <= limit else { return nil }
        index = space + 1
        return bytes[rest.startIndex..<space]
    }

    /// Takes `text` when the line goes on with it.
    mutating func take(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard bytes[index...].starts(with: utf8) else { return false }
        index += utf8.count
        return true
    }

    /// A run of decimal digits, saturating at `Int64.max` (never overflowing); nil without a digit.
    mutating func number() -> Int64? {
        var value: Int64 = 0
        var digits = 0
        while index < bytes.endIndex, (0x30...0x39).contains(bytes[index]) {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(Int64(bytes[index] - 0x30))
            value = overflow || carry ? .max : sum
            digits += 1
            index += 1
        }
        return digits > 0 ? value : nil
    }

    /// A field in double quotes, with `\"` and `\\` (any escaped byte) unescaped; at most `fieldLimit` bytes. Not
    /// `keeping` it: checked and skipped, the result empty.
    mutating func quoted(keeping: Bool = true) -> [UInt8]? {
        guard index < bytes.endIndex, bytes[index] == Self.quote else { return nil }
        index += 1
        var out: [UInt8] = []
        var count = 0
        while index < bytes.endIndex {
            var byte = bytes[index]
            index += 1
            if byte == Self.quote { return out }
            if byte == UInt8(ascii: "\\") {
                guard index < bytes.endIndex else { return nil }
                byte = bytes[index]
                index += 1
            }
            guard count < AccessLogLine.fieldLimit else { return nil }
            count += 1
            if keeping { out.append(byte) }
        }
        return nil
    }

    /// `[02/Dec/2026:16:03:08 +0000]` as Unix seconds (the offset applied); nil for anything else, with the reason.
    mutating func date() -> Int64? {
        let width = 28
        guard bytes.endIndex - index >= width else { return nil }
        let field = bytes[index..<index + width]
        let base = index
        index += width
        func digits(_ at: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for byte in field[(base + at)..<(base + at + count)] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        func byte(_ at: Int, _ character: Character) -> Bool { field[base + at] == character.asciiValue }
        guard byte(0, "["), byte(3, "/"), byte(7, "/"), byte(12, ":"), byte(15, ":"), byte(18, ":"), byte(21, " "),
            byte(27, "]"), byte(22, "+") || byte(22, "-"),
            let day = digits(1, 2), let year = digits(8, 4), let hour = digits(13, 2), let minute = digits(16, 2),
            let second = digits(19, 2), let offsetHours = digits(23, 2), let offsetMinutes = digits(25, 2),
            let month = CivilDate.month(field[(base + 4)..<(base + 7)])
        else { return nil }
        guard let days = CivilDate.days(year: year, month: month, day: day), hour < 24, minute < 60, second <= 60,
            offsetHours < 24, offsetMinutes < 60
        else {
            failure = "no such date"
            return nil
        }
        let offset = (offsetHours * 60 + offsetMinutes) * 60 * (byte(22, "-") ? -1 : 1)
        let time = days * 86_400 + hour * 3_600 + minute * 60 + second - offset
        guard time >= 0 else {
            failure = "a date before 1970"
            return nil
        }
        return time
    }
}
