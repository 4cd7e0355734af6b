/// A setting or argument that cannot work, in words a person can act on.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
