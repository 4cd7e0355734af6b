/// Trimming text from the wire and from config files, and numbers for log lines, shared by every layer.
extension StringProtocol {
    /// Without the spaces and tabs around it: one item of a comma-separated config value.
    package func trimmingBlanks() -> String {
        var text = self[...]
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}

extension String {
    /// Without the whitespace (newlines too) around it.
    package func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}

/// Whole seconds for a log line, for any Double (infinity and NaN included) without trapping.
package func wholeSeconds(_ seconds: Double) -> String {
    guard seconds.isFinite else { return seconds.isNaN ? "?" : (seconds > 0 ? "∞" : "-∞") }
    guard abs(seconds) < 1e15 else { return seconds > 0 ? "∞" : "-∞" }
    return String(Int64(seconds.rounded(.towardZero)))
}
