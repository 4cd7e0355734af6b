/// Building JSON text by hand, for the status report and the Icecast-compatible status: strings escaped per RFC 8259 §7 (`"`, `\` and every control
/// character below U+0020, plus U+007F and the line and paragraph separators, which some JavaScript consumers
/// choke on), numbers that are always valid JSON (a non-finite double becomes `null`).
package enum JSONText {
    /// `text` as a JSON string literal, quotes included.
    package static func string(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    out += "\\u" + hex4(scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A string literal, or `null`.
    package static func string(_ text: String?) -> String { text.map(string) ?? "null" }

    /// A number rounded to `decimals` places; `null` when not finite (JSON has no infinity or NaN).
    package static func number(_ value: Double, decimals: Int = 3) -> String {
        guard value.isFinite else { return "null" }
        let scale = [1.0, 10, 100, 1000, 10_000, 100_000, 1_000_000][max(0, min(decimals, 6))]
        let rounded = (value * scale).rounded() / scale
        guard rounded.isFinite else { return "null" }
        // Whole numbers without a fraction; Swift's shortest form otherwise (`0.3`, `1e-05` are valid JSON).
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int64(rounded)) }
        return rounded.description
    }

    package static func number(_ value: Int) -> String { String(value) }

    /// An object from already encoded members, in order.
    package static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// An array from already encoded elements: always `[…]`, also for one element or none.
    package static func array(_ elements: [String]) -> String { "[" + elements.joined(separator: ",") + "]" }

    package static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: false)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
