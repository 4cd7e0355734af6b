import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Which of the station's pages a push sends next, as a pure value over a `PageWindow` (tests: `PushCursorTests`).
///
/// A push reads the ring as a listener would. A connection starts with the header pages, then the newest clean page
/// (one whose first packet is not continued, `ListenerSchedule.liveEdge`), so Icecast's Ogg parser starts at a packet
/// boundary; then every page in order. A push that falls behind — its next page has left the ring, or the newest page
/// is more than `maxLag` seconds past it (Icecast or the path does not take the stream at real time) — is `.behind`:
/// its connection is given up, and the next one starts cleanly with the header pages again. Skipping pages inside a
/// connection would hand Icecast's listeners a gap in the page sequence instead.
struct PushCursor: Equatable {
    enum Step: Equatable {
        /// Nothing to send now.
        case wait
        /// A new connection's first pages: the header pages, then the ring's pages `from..<end`.
        case start(from: Int64, end: Int64)
        /// The ring's pages `from..<end`, which follow what was sent.
        case send(from: Int64, end: Int64)
        /// The push fell behind (see the type's comment): give the connection up.
        case behind(Lag)
    }

    enum Lag: Equatable {
        /// The next page has left the ring.
        case overtaken
        /// Seconds between the next page and the newest one.
        case seconds(Double)
    }

    /// Seconds the push may fall behind the newest page before its connection is given up.
    let maxLag: Double
    /// The ring index of the next page to send; nil before a connection's first pages.
    private(set) var next: Int64?

    init(maxLag: Double) { self.maxLag = maxLag }

    /// What to send now that the ring holds `window`, when at most `room` more pages may wait to be sent.
    mutating func step(_ window: some PageWindow, room: Int) -> Step {
        guard let next else {
            guard window.count > 0, room > 0 else { return .wait }
            let start = ListenerSchedule(flushInterval: 0, maxLag: maxLag, burst: 0).liveEdge(window)
            guard start < window.head else { return .wait }  // no clean page yet
            let end = min(window.head, start + Int64(room))
            self.next = end
            return .start(from: start, end: end)
        }
        guard next >= window.oldest, next <= window.head else { return .behind(.overtaken) }
        guard next < window.head, let live = window.newestTimeline else { return .wait }
        let behind = live &- window.timeline(at: Int(next - window.oldest))
        let seconds = Double(behind) / ListenerSchedule.granuleRate
        if seconds > maxLag { return .behind(.seconds(seconds)) }
        guard room > 0 else { return .wait }
        let end = min(window.head, next + Int64(room))
        self.next = end
        return .send(from: next, end: end)
    }

    /// A new connection: it starts with the header pages again.
    mutating func restart() { next = nil }
}
