import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Everything wrong with a config file, found in one pass: one message per problem, each starting with
/// `FILE:LINE: ` (or `FILE: ` for the file as a whole) and saying what was expected, in the order of the file.
/// `ExitCode(for:)` maps it to 78 (EX_CONFIG).
package struct ConfigFileError: Error, CustomStringConvertible, Equatable, Sendable {
    package let messages: [String]

    package init(_ messages: [String]) { self.messages = messages }

    /// One message a line.
    package var description: String { messages.joined(separator: "\n") }
}

/// Collects a config file's problems while it is read, each with its place.
struct ConfigFileProblems {
    let file: String
    private(set) var messages: [(line: Int, text: String)] = []

    init(file: String) { self.file = file }

    /// A problem at `line` (1-based).
    mutating func add(_ line: Int, _ text: String) { messages.append((line, "\(file):\(line): \(text)")) }

    /// A problem of the file as a whole, listed after those with a line.
    mutating func addToFile(_ text: String) { messages.append((Int.max, "\(file): \(text)")) }

    var isEmpty: Bool { messages.isEmpty }

    /// The error to throw: the messages in line order (stable, so one line's problems keep their order).
    var error: ConfigFileError {
        ConfigFileError(
            messages.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
                .map(\.element.text))
    }
}
