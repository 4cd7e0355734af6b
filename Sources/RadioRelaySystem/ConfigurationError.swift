/// A setting or argument that cannot work, in words a person can act on.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public let message: String
    /// Redacted: a configuration message may quote a URL with its credentials.
    public init(_ message: String) { self.message = Redaction.text(message) }
    public var description: String { message }
}
