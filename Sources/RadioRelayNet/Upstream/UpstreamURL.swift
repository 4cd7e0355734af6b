import RadioRelayMedia
import RadioRelaySystem

/// What an upstream string names, decided once, before any connection: a station refuses a URL it could never
/// read at start-up, instead of retrying it forever.
public enum UpstreamURL: Equatable, Sendable {
    /// `http://` or `https://`, read with libcurl.
    case http
    /// A `file:` URL or a plain path, read directly.
    case file
    /// `tcp://HOST:PORT`: another relay's raw port, read with the relay's own socket code (an Ogg Opus stream).
    case tcp

    /// Schemes the Downloader reads, for error messages.
    package static let schemes = "http://, https://, tcp://, file:// or a path"

    /// Whether the upstream is an Ogg Opus stream to relay as it is (no decoding): `tcp://`, or an http(s) or
    /// file path ending in `.opus`, `.ogg` or `.oga` (another relay's or Icecast's Ogg mount).
    public static func isOggOpus(_ url: String) -> Bool {
        let lower = url.lowercased()
        if lower.hasPrefix("tcp://") { return true }
        let path = lower.prefix { $0 != "?" && $0 != "#" }
        return path.hasSuffix(".opus") || path.hasSuffix(".ogg") || path.hasSuffix(".oga")
    }

    /// Classifies `url`, or throws a `DownloadError` of kind `.badURL` saying what is wrong with it.
    public static func classify(_ url: String) throws(DownloadError) -> UpstreamURL {
        guard !url.isEmpty else { throw DownloadError(.badURL, url: url, "empty upstream") }
        if let bad = url.unicodeScalars.first(where: { $0.value < 0x21 || $0.value == 0x7F }) {
            let code = String(bad.value, radix: 16, uppercase: true)
            throw DownloadError(.badURL, url: url, "the URL contains a space or control character (U+\(code))")
        }
        let lower = url.lowercased()
        for scheme in ["http://", "https://"] where lower.hasPrefix(scheme) {
            let rest = lower.dropFirst(scheme.count)
            let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            let host = authority.split(separator: "@").last.map(String.init) ?? ""
            guard !host.isEmpty, !host.hasPrefix(":") else {
                throw DownloadError(.badURL, url: url, "the URL has no host name")
            }
            return .http
        }
        if lower.hasPrefix("tcp://") {
            guard TCPSource.endpoint(url) != nil else {
                throw DownloadError(.badURL, url: url, "a tcp: upstream is tcp://HOST:PORT (port \(Port.accepts))")
            }
            return .tcp
        }
        if let colon = lower.firstIndex(of: ":"), lower[colon...].hasPrefix("://"), !lower.hasPrefix("file://") {
            let scheme = lower[..<colon]
            throw DownloadError(.badURL, url: url, "unsupported URL scheme \(scheme):// (use \(schemes))")
        }
        if lower.hasPrefix("file:") && !lower.hasPrefix("file:/") {
            throw DownloadError(.badURL, url: url, "a file: URL needs an absolute path (use \(schemes))")
        }
        return .file
    }
}
