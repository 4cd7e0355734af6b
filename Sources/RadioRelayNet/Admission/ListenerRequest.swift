import RadioRelayMedia
import RadioRelaySystem

/// What an HTTP listener asked for: kept for its stream (titles in band) and for its access-log line.
package struct ListenerRequest: Sendable, Equatable {
    /// The request line, `GET /jazz.mp3 HTTP/1.1`: the path without its query (whose values could be secrets).
    package var line: String
    package var referrer: String?
    package var userAgent: String?
    /// Audio bytes between ICY metadata blocks (`icy-metaint`), when it asked for titles in band; 0: none.
    package var metaInterval = 0
    /// Where in the mount's archive it asked to start (`?start=`, `?offset=`); nil: live.
    package var timeShift: TimeShiftStart?

    package init(line: String, referrer: String? = nil, userAgent: String? = nil, metaInterval: Int = 0) {
        self.line = line
        self.referrer = referrer
        self.userAgent = userAgent
        self.metaInterval = metaInterval
    }
}

extension ListenerRequest {
    /// The same request as if it had asked for `mount` (a listener moved there: its access log line names it): the
    /// request line's method and version kept, its path replaced.
    package func moved(to mount: String) -> ListenerRequest {
        var moved = self
        let words = line.utf8.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        let method = words.first.map { String(decoding: $0, as: UTF8.self) } ?? "GET"
        let version = words.count >= 3 ? String(decoding: words[words.count - 1], as: UTF8.self) : "HTTP/1.1"
        moved.line = "\(method) \(mount) \(version)"
        return moved
    }
}
