import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Why a push's connection to Icecast ended, in words an operator can act on. Every failure is retried (a wrong
/// password too: it may be fixed on the Icecast side); `kind` groups them for the log, one line per kind with a count.
struct PushFailure: Error, Equatable, CustomStringConvertible {
    enum Kind: Hashable, Sendable, CustomStringConvertible {
        /// No connection: the name does not resolve, the port is closed, the connect timed out.
        case connect
        /// Icecast answered with an error status: 401 (source password), 403 (mount in use, or no more sources).
        case refused(status: Int)
        /// Icecast (or the path) ended a connection it had accepted: a restart, a kick from the admin page.
        case closed
        /// The push fell more than the allowed lag behind the station: Icecast did not take the stream at real time.
        case behind
        /// Anything else libcurl reports.
        case transfer

        var description: String {
            switch self {
            case .connect: "connect"
            case .refused(let status): "HTTP \(status)"
            case .closed: "closed"
            case .behind: "behind"
            case .transfer: "transfer"
            }
        }
    }

    let kind: Kind
    /// Redacted: libcurl's and Icecast's words may quote a URL.
    let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = Redaction.text(message)
    }

    var description: String { message }

    /// Icecast's refusal, with its one-line reason and what to check.
    static func refused(status: Int, body: [UInt8]) -> PushFailure {
        let text = String(decoding: body.prefix { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self)
        let reason = Sanitized.text(text, limit: 160)
        let hint: String
        switch status {
        case 401: hint = " (check the user and source password)"
        case 403: hint = " (the mount is in use by another source, or Icecast has its maximum of sources)"
        default: hint = ""
        }
        return PushFailure(
            .refused(status: status), "Icecast answered HTTP \(status)\(reason.isEmpty ? "" : ": \(reason)")\(hint)")
    }
}
