import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// A config file's text cut into sections of `key = value` entries, before any key means anything.
///
/// The syntax: one item a line. A line whose first non-blank character is `#` or `;` is a comment; blank lines are
/// skipped; `[server]`, `[station NAME]`, `[rendition STATION/NAME]` and `[input STATION/NAME]` open a section (NAME:
/// 1 to 64 of
/// `A-Z a-z 0-9 _ -`); `key = value`
/// belongs to the section above it, key and value with blanks trimmed and the value optionally in double quotes
/// (taken as they are inside, with no escapes). A comment after a value is part of the value. A UTF-8 byte order
/// mark and `\r` line ends are accepted.
struct ConfigFileLines {
    struct Entry {
        let key: String
        /// The value as written, unquoted; nil when it could not be read (an unclosed quote, already reported).
        let value: String?
        let line: Int
    }

    enum Header: Equatable {
        case server
        /// A station, with `validName` false when NAME breaks the naming rule (its keys are still checked).
        case station(name: String, validName: Bool)
        /// Another output of station `station`, with `validName` false when either name breaks the rule.
        case rendition(station: String, name: String, validName: Bool)
        /// One more input of station `station` (after its `upstream` values), with `validName` as for a rendition.
        case input(station: String, name: String, validName: Bool)
        /// A DJ account, with `validName` false when NAME breaks `DJAccount.nameRule` (its keys are still checked).
        case dj(name: String, validName: Bool)
        /// An unknown section: its keys are skipped, since nothing says what they should be.
        case unknown
    }

    struct Section {
        let header: Header
        let line: Int
        var entries: [Entry] = []
    }

    private(set) var sections: [Section] = []

    static let nameRule = StationNames.rule

    /// The lines of a text file as the configuration reads them (its own, and the files its keys name): a byte
    /// order mark dropped, `\n` and `\r\n` line ends.
    static func lines(_ text: String) -> [Substring] {
        var body = Substring(text)
        if body.hasPrefix("\u{FEFF}") { body = body.dropFirst() }
        // "\r\n" is one Character in Swift, so it is matched as such.
        return body.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
    }

    init(_ text: String, problems: inout ConfigFileProblems) {
        for (index, raw) in Self.lines(text).enumerated() {
            let line = index + 1
            let trimmed = Substring(String(raw).trimmingWhitespace())
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if trimmed.hasPrefix("[") {
                sections.append(Section(header: Self.header(trimmed, line: line, &problems), line: line))
            } else if let equals = trimmed.firstIndex(of: "=") {
                entry(trimmed, equals: equals, line: line, &problems)
            } else {
                problems.add(line, "expected [server], [station NAME], key = value, or a comment starting with # or ;")
            }
        }
    }

    private mutating func entry(
        _ text: Substring, equals: Substring.Index, line: Int, _ problems: inout ConfigFileProblems
    ) {
        let key = String(text[..<equals]).trimmingWhitespace()
        var value: String? = String(text[text.index(after: equals)...]).trimmingWhitespace()
        guard !key.isEmpty else {
            problems.add(line, "a value without a key: write key = value")
            return
        }
        guard !sections.isEmpty else {
            problems.add(line, "key \(key) is outside any section: put it under [server] or [station NAME]")
            return
        }
        if let quoted = value, quoted.hasPrefix("\"") {
            if quoted.count >= 2, quoted.hasSuffix("\"") {
                value = String(quoted.dropFirst().dropLast())
            } else {
                problems.add(line, "the value of \(key) opens a double quote that does not close")
                value = nil
            }
        }
        sections[sections.count - 1].entries.append(Entry(key: key, value: value, line: line))
    }

    private static func header(_ text: Substring, line: Int, _ problems: inout ConfigFileProblems) -> Header {
        guard text.count >= 2, text.hasSuffix("]") else {
            problems.add(line, "a section header must end with ]: [server] or [station NAME]")
            return .unknown
        }
        let inside = String(text.dropFirst().dropLast()).trimmingWhitespace()
        if inside == "server" { return .server }
        let words = inside.split(maxSplits: 1, whereSeparator: \.isWhitespace)
        if let kind = words.first, kind == "rendition" || kind == "input" {
            let text = words.count > 1 ? String(words[1]).trimmingWhitespace() : ""
            let (station, name, valid) = part(String(kind), text, line: line, &problems)
            return kind == "input"
                ? .input(station: station, name: name, validName: valid)
                : .rendition(station: station, name: name, validName: valid)
        }
        if words.first == "dj" {
            let name = words.count > 1 ? String(words[1]).trimmingWhitespace() : ""
            guard DJAccount.isValidName(name) else {
                let problem = name.isEmpty ? "[dj] needs a NAME" : "bad DJ name \"\(name)\""
                problems.add(line, "\(problem): use \(DJAccount.nameRule), as in [dj alice]")
                return .dj(name: name, validName: false)
            }
            return .dj(name: name, validName: true)
        }
        guard words.first == "station" else {
            problems.add(
                line,
                "unknown section [\(inside)]: use [server], [station NAME], [rendition STATION/NAME], "
                    + "[input STATION/NAME] or [dj NAME]")
            return .unknown
        }
        let name = words.count > 1 ? String(words[1]).trimmingWhitespace() : ""
        guard isValidName(name) else {
            let problem = name.isEmpty ? "[station] needs a NAME" : "bad station name \"\(name)\""
            problems.add(line, "\(problem): use \(nameRule), as in [station jazz]")
            return .station(name: name, validName: false)
        }
        return .station(name: name, validName: true)
    }

    /// `[rendition STATION/NAME]` or `[input STATION/NAME]`, both names by the station naming rule (an input's not
    /// all digits: those name the station's `upstream` values).
    private static func part(
        _ kind: String, _ text: String, line: Int, _ problems: inout ConfigFileProblems
    ) -> (station: String, name: String, valid: Bool) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let station = parts[0]
        let name = parts.count > 1 ? parts[1] : ""
        guard parts.count == 2, isValidName(station), isValidName(name) else {
            let example = kind == "input" ? "[input jazz/fallback]" : "[rendition jazz/low]"
            problems.add(
                line,
                "bad \(kind) \"\(text)\": use [\(kind) STATION/NAME], each name \(nameRule), as in \(example)")
            return (station, name, false)
        }
        if kind == "input" && name.allSatisfy(\.isNumber) {
            problems.add(
                line,
                "[input \(text)]: an input's name is not a number (1, 2, … name the station's upstream values): "
                    + "use a word, as in [input \(station)/fallback]")
            return (station, name, false)
        }
        return (station, name, true)
    }

    /// `[A-Za-z0-9_-]{1,64}`: the name appears in URLs, metric labels and socket names.
    static func isValidName(_ name: String) -> Bool { StationNames.isValid(name) }
}
