import RadioRelayMedia
import RadioRelaySystem

/// The pages a schedule looks at: the ring's indices `oldest..<head` with their metadata, and the header pages a new
/// listener gets first (those of the current chained link). The loop's snapshot of the `PageRing` conforms; tests use
/// a plain array.
package protocol PageWindow {
    /// Index of the oldest page held.
    var oldest: Int64 { get }
    /// Pages held (indices `oldest ..< oldest + count`).
    var count: Int { get }
    /// Header pages a listener gets first.
    var headerCount: Int { get }
    /// The link those header pages belong to (see `link(at:)`).
    var headerLink: Int64 { get }
    /// Where the page `offset` places after the oldest ends on the stream-wide timeline (48 kHz samples; it goes on
    /// across chained links, where granule positions start again).
    func timeline(at offset: Int) -> Int64
    /// Whether that page's first packet continues one from the previous page (no clean start).
    func isContinued(at offset: Int) -> Bool
    /// Whether it is one of a later link's header pages (OpusHead, OpusTags), not audio.
    func isHeader(at offset: Int) -> Bool
    /// The chained link it belongs to (-1: the first; a later one: the ring index of its BOS page).
    func link(at offset: Int) -> Int64
}

extension PageWindow {
    /// Index the next published page will get: the live edge's end.
    package var head: Int64 { oldest + Int64(count) }

    /// Where the newest page held ends on the stream-wide timeline: the live edge's position (nil when no page is).
    package var newestTimeline: Int64? { count > 0 ? timeline(at: count - 1) : nil }

    /// Whether a listener given the header pages may start at the page `offset`: an audio page of the headers' link
    /// whose first packet is not continued.
    package func isStart(at offset: Int) -> Bool {
        !isContinued(at: offset) && !isHeader(at: offset) && link(at: offset) == headerLink
    }
}
