import RadioRelayMedia
import RadioRelaySystem

/// Server-Sent Events for a mount's title (`GET /NAME/events`): the wire format, and when a subscriber is written,
/// as pure values (tests: `PublicHTTPTests`).
///
/// A subscriber gets a `retry` hint and the current title at once, one `title` event per change, and a comment
/// every `keepAliveInterval` so that proxies and browsers keep an idle connection open. A subscriber whose socket
/// stays backed up for `stallLimit` (two keep-alives it could not be sent) is stalled: it is dropped.
package struct EventStream: Sendable, Equatable {
    package static let keepAliveInterval = 15.0
    package static let stallLimit = 2 * keepAliveInterval
    /// Milliseconds a browser waits before it reconnects a dropped event stream.
    package static let retryMilliseconds = 3000

    /// The title last sent (nil: none yet; "" is sent for no title).
    package private(set) var sentTitle: String?
    package private(set) var nextKeepAlive: Double
    /// Since when its socket has held unsent output (nil: it took everything).
    package private(set) var backedUpSince: Double?

    package init(now: Double) {
        nextKeepAlive = now + Self.keepAliveInterval
    }

    /// What to send at `now` for the mount's `title`: the event when it changed (the first call always sends it),
    /// a keep-alive when one is due, or nothing.
    package mutating func output(title: String?, now: Double) -> [UInt8] {
        let current = title ?? ""
        var text = ""
        if sentTitle == nil { text += "retry: \(Self.retryMilliseconds)\n\n" }
        if sentTitle != current {
            sentTitle = current
            text += Self.event("title", data: current)
        } else if now >= nextKeepAlive {
            text += ": keep-alive\n\n"
        }
        if !text.isEmpty { nextKeepAlive = now + Self.keepAliveInterval }
        return Array(text.utf8)
    }

    /// Notes whether the subscriber's socket took everything it was given at `now`.
    package mutating func noteBackedUp(_ backedUp: Bool, now: Double) {
        if !backedUp {
            backedUpSince = nil
        } else if backedUpSince == nil {
            backedUpSince = now
        }
    }

    /// Whether it has been backed up for `stallLimit` or longer at `now`.
    package func isStalled(now: Double) -> Bool {
        guard let since = backedUpSince else { return false }
        return now - since >= Self.stallLimit
    }

    /// One event; each line of `data` its own `data:` field (a title has no line breaks, but the format holds).
    package static func event(_ name: String, data: String) -> String {
        let lines = data.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" })
        return "event: \(name)\n" + lines.map { "data: \($0)\n" }.joined() + "\n"
    }
}
