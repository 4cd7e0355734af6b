import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The config reader's small checks and the wording of its errors: a push target seen twice, a key given twice, a
/// key without a value, an unknown key with the keys its section accepts.
extension ConfigFileReader {
    mutating func checkPush(_ pushes: [IcecastTarget], line: Int, _ lines: inout [Int]) -> Bool {
        lines.append(line)
        guard let last = pushes.last, let first = pushes.dropLast().firstIndex(where: { $0.sameMount(as: last) })
        else { return true }
        problems.add(
            line, "push to \(last) again (the first is at line \(lines[first])): Icecast takes one source per mount")
        return false
    }

    /// False, with a problem, for a key already given in this section.
    mutating func firstTime(_ entry: ConfigFileLines.Entry, _ seen: inout [String: Int]) -> Bool {
        if let first = seen[entry.key] {
            problems.add(entry.line, "duplicate key \(entry.key) (the first is at line \(first)): keep one")
            return false
        }
        seen[entry.key] = entry.line
        return true
    }

    /// False, with a problem, for `key =` with nothing after it.
    mutating func hasValue(_ key: String, _ value: String, line: Int, accepts: String) -> Bool {
        guard value.isEmpty else { return true }
        problems.add(line, "\(key) needs a value: \(accepts)")
        return false
    }

    /// `entry`'s value read by `parse` for `option`; nil (reported with what the option accepts) when it is empty or
    /// not one `parse` takes.
    mutating func value<Value>(
        _ entry: ConfigFileLines.Entry, _ value: String, for option: OptionSpecification,
        _ parse: (String) -> Value?
    ) -> Value? {
        guard hasValue(entry.key, value, line: entry.line, accepts: option.accepts) else { return nil }
        guard let parsed = parse(value) else {
            problems.add(entry.line, "\(entry.key) = \(option.quoted(value)): use \(option.accepts)")
            return nil
        }
        return parsed
    }

    static func unknownKey(_ key: String, in section: String, keys: [String]) -> String {
        let underscored = String(key.map { $0 == "-" ? "_" : $0 })
        if underscored != key && keys.contains(underscored) {
            return "unknown key \(key) in \(section): write \(underscored)"
        }
        return "unknown key \(key) in \(section): use \(list(keys))"
    }

    /// "a, b or c".
    static func list(_ words: [String]) -> String {
        guard let last = words.last, words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + last
    }
}
