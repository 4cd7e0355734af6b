import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Splits one command's arguments into positional arguments and `--flag value` / `--flag=value` pairs, checking
/// each flag against the command's options. The values are still text; the command reads them.
struct ArgumentScanner {
    private(set) var positional: [String] = []
    /// The last value given for each flag.
    private(set) var values: [String: String] = [:]
    /// Every value given for each flag, in order (for a repeatable flag: `--push`, `--rendition`).
    private(set) var allValues: [String: [String]] = [:]
    /// `--help` or `-h` came before anything wrong.
    private(set) var wantsHelp = false

    let options: [OptionSpecification]
    let topic: HelpTopic

    init(_ arguments: ArraySlice<String>, options: [OptionSpecification], topic: HelpTopic) throws(UsageError) {
        self.options = options
        self.topic = topic
        var iterator = arguments.makeIterator()
        var optionsEnded = false
        while let argument = iterator.next() {
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positional.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "--help" || argument == "-h" {
                wantsHelp = true
                return
            }
            guard argument.hasPrefix("--") else { throw error("unknown option \(argument)") }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = options.first(where: { $0.name == name }) else {
                throw error("unknown option --\(name)")
            }
            guard let given = value ?? iterator.next(), !given.isEmpty else {
                throw error("--\(name) needs a value: \(option.accepts)")
            }
            values[name] = given
            allValues[name, default: []].append(given)
        }
    }

    /// A usage error of this command.
    func error(_ message: String) -> UsageError { UsageError(message, topic: topic) }

    /// The flag's value read by `convert`; nil when the flag was not given; a usage error naming the flag and what
    /// it accepts when `convert` rejects the text.
    func value<Value>(_ name: String, _ convert: (String) -> Value?) throws(UsageError) -> Value? {
        guard let text = values[name] else { return nil }
        guard let value = convert(text) else {
            let accepts = options.first { $0.name == name }?.accepts ?? "another value"
            throw error("--\(name) \(text): use \(accepts)")
        }
        return value
    }
}
