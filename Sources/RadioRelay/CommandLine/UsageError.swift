import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// A command line that cannot be run as typed: an unknown command or option, a missing or out-of-range value.
///
/// `message` is one line that names the flag and what it accepts; `hint` points to the help of the command that was
/// being parsed. Printed as `radio-relay: <message>` and the hint, with exit status 64 (`ExitCode.usage`).
package struct UsageError: Error, Equatable, CustomStringConvertible, Sendable {
    package let message: String
    /// The help that lists what this command accepts.
    package let topic: HelpTopic

    package init(_ message: String, topic: HelpTopic) {
        self.message = message
        self.topic = topic
    }

    /// "try `radio-relay serve --help`", naming the help of the command being parsed.
    package var hint: String { "try `\(topic.invocation)`" }

    package var description: String { message }
}
