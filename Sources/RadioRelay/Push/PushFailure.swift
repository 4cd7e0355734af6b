import CCurl
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
        /// `icecasts://`: the TLS handshake failed, or the server's certificate was not accepted (not signed by a CA
        /// in `push_ca` or the system's store, expired, or not naming the host).
        case tls
        /// The push fell more than the allowed lag behind the station: Icecast did not take the stream at real time.
        case behind
        /// Anything else libcurl reports.
        case transfer

        var description: String {
            switch self {
            case .connect: "connect"
            case .refused(let status): "HTTP \(status)"
            case .closed: "closed"
            case .tls: "TLS"
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

    /// An `icecasts://` connection's TLS failure, from libcurl's code and words (`text`), with what to check; nil for
    /// any other failure.
    static func tls(_ result: CURLcode, _ text: String, target: IcecastTarget) -> PushFailure? {
        let address = target.host.contains(":") ? "[\(target.host)]:\(target.port)" : "\(target.host):\(target.port)"
        switch result {
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR:
            return PushFailure(
                .tls,
                "the server's TLS certificate was not accepted: \(text) (it must be signed by a CA in push_ca, or in "
                    + "the system's store without push_ca, and name \(target.host))")
        case CURLE_SSL_CONNECT_ERROR:
            return PushFailure(.tls, "the TLS handshake failed: \(text) (does \(address) speak TLS?)")
        case CURLE_SSL_CACERT_BADFILE:
            return PushFailure(.tls, "the CA certificates cannot be loaded: \(text) (check push_ca)")
        // libcurl's words for a connect timeout in the handshake (its timing info is empty after a failure): the
        // peer took the TCP connection and waits for a plain request, as Icecast's plain port does.
        case CURLE_OPERATION_TIMEDOUT where text.contains("SSL connection timeout"):
            return PushFailure(
                .tls,
                "the TLS handshake timed out: \(text) (does \(address) speak TLS? Icecast's plain port takes "
                    + "icecast://)")
        default:
            return nil
        }
    }
}
