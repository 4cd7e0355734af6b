import RadioRelayMedia
import RadioRelaySystem

/// Why the upstream could not be read, in words an operator can act on: what, where, and the cause.
public struct DownloadError: Error, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The URL itself is unusable (scheme, syntax): retrying will not help.
        case badURL
        /// The server answered with an HTTP error status.
        case httpStatus(Int)
        /// No connection, a reset, a timeout or a stall: worth retrying.
        case transfer
        /// A local file could not be opened or read.
        case file
    }

    public let kind: Kind
    /// The upstream, shown redacted.
    public let url: SecretURL
    public let message: String

    public init(_ kind: Kind, url: String, _ message: String) {
        self.kind = kind
        self.url = SecretURL(url)
        self.message = message
    }

    /// Redacted whole: a transfer library's message may quote the URL too.
    public var description: String { "\(url): \(Redaction.text(message))" }
}
