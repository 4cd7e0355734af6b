import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// How often a station takes a new title, as a pure value on virtual time: at most one every `interval` seconds.
/// A title that comes sooner is held, a newer one replacing it (the newest wins), and shown when the interval is
/// over, with the count of titles that were never shown. An upstream that changes its title with every metadata
/// block (every few bytes, with a small `icy-metaint`) thus costs one log line and one status update a second.
struct TitleThrottle: Sendable {
    static let interval = 1.0

    private var lastShown: Double?
    private(set) var held: String?
    private var skipped = 0

    /// A new title at `now`: to show now, with the count of titles not shown since the last one; nil when held.
    mutating func offer(_ title: String, now: Double) -> (title: String, skipped: Int)? {
        if held != nil { skipped += 1 }  // the one held is replaced, never shown
        held = title
        return due(now: now)
    }

    /// The held title, once its time has come.
    mutating func due(now: Double) -> (title: String, skipped: Int)? {
        guard let title = held else { return nil }
        if let last = lastShown, now - last < Self.interval, now >= last { return nil }
        held = nil
        lastShown = now
        defer { skipped = 0 }
        return (title, skipped)
    }
}
