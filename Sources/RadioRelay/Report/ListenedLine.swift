/// One listener's line as a listening report counts it: where it listened, who it is, which session it belongs to
/// and when. What `AccessLogTally` keeps of each line it read, and what `ListeningReport` is built from.
package struct ListenedLine: Sendable, Equatable {
    /// The mount, from the request's path (`ListenedLine.place(ofRequest:)`).
    package var mount: String
    /// Its address and user agent, for unique listeners.
    package var listener: ListenerKey
    /// When it left, Unix seconds.
    package var leave: Int64
    /// Seconds connected, at most `leave`: it listened during [leave − seconds, leave).
    package var seconds: Int64
    // The session and the edge flag, laid out flat (64 bytes a line, not 80: a report keeps millions).
    private var id: UInt64
    private var run: UInt32
    private var hasSession: Bool
    /// A relay's own edge (its user agent starts with `radio-relay/`), not a listener.
    package var isEdge: Bool

    package init(
        mount: String, listener: ListenerKey, session: SessionKey?, leave: Int64, seconds: Int64, isEdge: Bool = false
    ) {
        self.mount = mount
        self.listener = listener
        self.leave = leave
        self.seconds = min(max(0, seconds), max(0, leave))
        id = session?.id ?? 0
        run = session?.run ?? 0
        hasSession = session != nil
        self.isEdge = isEdge
    }

    /// Its run and ID; nil for a line without one (then the line is a session of its own).
    package var session: SessionKey? { hasSession ? SessionKey(run: run, id: id) : nil }

    package var start: Int64 { leave - seconds }

    /// What a request's path says the line is.
    package enum Place: Sendable, Equatable {
        /// Audio: a mount (`/jazz.opus`), or an HLS session's directory (`/jazz/` for `/jazz/live.m3u8`).
        case mount(String)
        /// A title-event subscriber (`/NAME/events`, `/events`): no audio.
        case titleEvents
    }

    /// Where a line's request line listened: `TCP /jazz.opus` (raw TCP, the mount its port serves), `GET /jazz.mp3
    /// HTTP/1.1`; an HLS session's playlist (`live.m3u8`, `master.m3u8`) counts under its directory, as the log
    /// cannot tell which mount the directory is (`/jazz/` serves `/jazz.opus`; `--station-of` puts them together).
    /// Nil for a request without a `/PATH`.
    package static func place(ofRequest request: String) -> Place? {
        let parts = request.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return nil }
        var path = parts[1]
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
        guard path.first == "/" else { return nil }
        let name = path.split(separator: "/").last ?? ""
        if name == "events" { return .titleEvents }
        if name == "live.m3u8" || name == "master.m3u8", let slash = path.lastIndex(of: "/") {
            return .mount(String(path[...slash]))
        }
        return .mount(String(path))
    }
}

/// Who a listener is, for "unique listeners": its address and user agent, kept as a 128-bit hash (two 64-bit
/// SipHash values seeded at random per process: two different listeners collide with a chance below 1 in 10^20 for a
/// billion lines, and a log cannot be crafted to collide) instead of the texts, which a hostile log could make large.
package struct ListenerKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    package init(address: String, userAgent: String) {
        func hash(_ salt: UInt8) -> UInt64 {
            var hasher = Hasher()
            hasher.combine(salt)
            hasher.combine(address)
            hasher.combine(userAgent)
            return UInt64(bitPattern: Int64(hasher.finalize()))
        }
        high = hash(1)
        low = hash(2)
    }
}
