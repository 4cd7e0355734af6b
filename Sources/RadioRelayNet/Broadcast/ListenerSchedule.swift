import RadioRelayMedia
import RadioRelaySystem

/// The listener rules as a pure value: where a new listener starts, how far behind it is, when its next write is
/// due, and what happens to one that falls behind. It takes `now` and a view of the ring and returns actions; the
/// network loop only executes them (sendmsg, epoll, close), so every rule is tested on virtual time (see
/// ListenerScheduleTests) with a fake ring and no sockets.
///
/// Positions and lags are read on the pages' stream-wide timeline, not their granule positions, which start again
/// in each chained link. A listener starts, and is moved, only to a page of the link whose header pages it has been
/// given: a new listener gets the current link's headers and a burst within that link; one moved across a link
/// boundary is given the current link's headers again (its BOS page first), so its stream stays decodable.
///
/// Hot path: the loop asks once per listener per page publication, for up to 10 000 listeners, so everything here
/// is plain structs and integer arithmetic — no allocation, no closure, no lock.
package struct ListenerSchedule: Sendable, Equatable {
    /// Granule positions count 48 kHz samples in Ogg Opus, whatever the input rate (RFC 7845 §4).
    package static let granuleRate = Double(OpusClock.rate)

    /// Seconds between writes to one listener (0: every publication): the policy's, for the loop's listener count
    /// as `retune` last saw it.
    package private(set) var flushInterval: Double
    /// Where `flushInterval` comes from.
    package let flush: FlushPolicy
    /// Seconds behind the live edge after which a listener is moved (once), then dropped.
    package let maxLag: Double
    /// How far back a new listener starts, in granules.
    package let burstGranules: Int64

    package init(flushInterval: Double, maxLag: Double, burst: Double) {
        self.init(flush: FlushPolicy(fixed: flushInterval), maxLag: maxLag, burst: burst)
    }

    package init(flush: FlushPolicy, maxLag: Double, burst: Double, listeners: Int = 0) {
        self.flush = flush
        self.flushInterval = flush.interval(listeners: listeners)
        self.maxLag = maxLag
        // Bounded before the conversion: a configuration is validated (0…60 s), but an Int64 conversion must not
        // trap whatever it is given.
        let granules = (burst * Self.granuleRate).rounded(.down)
        burstGranules = granules.isFinite ? Int64(max(0, min(granules, 1e12))) : 0
    }

    package init(_ configuration: BroadcasterConfiguration) {
        self.init(flush: configuration.flush, maxLag: configuration.maxLag, burst: configuration.burst)
    }

    /// Sets the interval for a loop now serving `listeners` (a fixed policy ignores it). Listeners keep their
    /// phase: each is next written ¾ of the new interval after its last write.
    package mutating func retune(listeners: Int) {
        flushInterval = flush.interval(listeners: listeners)
    }

    // MARK: Where to start

    /// Where a new listener starts: the first clean page (an audio page of the headers' link whose first packet is
    /// not continued) at most `burst` seconds before the live edge, so that its decoder starts at a packet boundary
    /// of the link it has the headers of, with enough audio to play. A link that began less than `burst` ago gives a
    /// shorter burst.
    package func burstStart(_ window: some PageWindow) -> Int64 {
        guard let newest = window.newestTimeline else { return window.head }
        let from = newest - burstGranules
        for offset in 0..<window.count where window.timeline(at: offset) > from && window.isStart(at: offset) {
            return window.oldest + Int64(offset)
        }
        return liveEdge(window)
    }

    /// The newest clean page of the headers' link, where a moved listener resumes (at a packet boundary); the head
    /// when there is none.
    package func liveEdge(_ window: some PageWindow) -> Int64 {
        var offset = window.count - 1
        while offset >= 0 {
            if window.isStart(at: offset) { return window.oldest + Int64(offset) }
            offset -= 1
        }
        return window.head
    }

    // MARK: How far behind

    /// How far the listener's next page is behind the live edge. A listener whose next page has left the ring is
    /// `.overtaken`: its lag is unknown (at least the ring's span), and it is never turned into a number.
    package func lag(of state: ListenerState, in window: some PageWindow) -> Lag {
        guard let cursor = state.cursor, let live = window.newestTimeline, cursor < window.head else {
            return .seconds(0)
        }
        let position: Int64
        if cursor >= window.oldest {
            position = window.timeline(at: Int(cursor - window.oldest))
        } else if let partial = state.partialTimeline {
            position = partial  // the loop keeps the partly sent page alive
        } else {
            return .overtaken
        }
        return .seconds(Double(live &- position) / Self.granuleRate)
    }

    // MARK: What to write

    /// Decides one flush of one listener at `now` and updates its state for the decision (start, move, the time of
    /// this write); the loop then writes the remaining headers and the pages `state.cursor..<end`, or closes the
    /// connection.
    ///
    /// A listener more than `maxLag` behind is moved to the live edge once, at a page boundary: a partly sent page
    /// (or header) is finished first, so its Ogg stream stays valid. It is dropped when it falls behind again, or
    /// when it does not even finish its page before twice the allowance. A listener the ring has overtaken is
    /// treated the same way: moved if it may still be and is between pages, dropped otherwise.
    package func plan(_ state: inout ListenerState, now: Double, window: some PageWindow) -> FlushAction {
        if state.cursor == nil, window.count > 0 || window.headerCount > 0 {
            state.cursor = burstStart(window)
            state.headerCount = window.headerCount
            state.link = window.headerLink
        }
        wrote(&state, now: now, window: window)
        let betweenPages = state.offset == 0 && state.headersSent >= state.headerCount
        if now >= state.endsAt {
            // Its session is over (`max_listener_duration`): the page (or header) in progress is finished, then the
            // stream ends at a page boundary, decodable to its last sample.
            guard betweenPages else { return .write(end: min(window.head, (state.cursor ?? window.head) + 1)) }
            return .end
        }
        switch lag(of: state, in: window) {
        case .overtaken:
            guard !state.moved, betweenPages else { return .drop(.overtaken(afterMove: state.moved)) }
            return move(&state, from: .overtaken, window: window)
        case .seconds(let lag) where lag > maxLag:
            if state.moved || lag > 2 * maxLag { return .drop(.behind(seconds: lag, afterMove: state.moved)) }
            guard betweenPages else {
                let cursor = state.cursor ?? window.head
                return .write(end: min(window.head, cursor + 1))  // finish this page only, move at the next
            }
            return move(&state, from: .seconds(lag), window: window)
        case .seconds:
            return .write(end: window.head)
        }
    }

    /// Moves the listener to the live edge; across a link boundary with the current link's header pages first.
    private func move(_ state: inout ListenerState, from lag: Lag, window: some PageWindow) -> FlushAction {
        state.moved = true
        state.cursor = liveEdge(window)
        state.partialTimeline = nil
        if state.link != window.headerLink {
            state.headersSent = 0
            state.headerCount = window.headerCount
            state.link = window.headerLink
        }
        return .moved(from: lag, end: window.head)
    }
}

/// One listener's place in the stream, as the schedule sees it (the loop keeps it in its `Listener`).
package struct ListenerState: Sendable, Equatable {
    /// Header pages already sent in full.
    package var headersSent = 0
    /// Header pages to send before the pages: those of the window when the listener started, or was moved across a
    /// link boundary (the loop keeps its own reference to them).
    package var headerCount = 0
    /// The chained link the listener's stream is in: that of its header pages, then of each page sent in full (a
    /// later link's BOS page moves it on).
    package var link: Int64 = -1
    /// Ring index of the next page to send; nil until there is something to send.
    package var cursor: Int64?
    /// Bytes of the current page (a header while `headersSent` < `headerCount`) already written.
    package var offset = 0
    /// Timeline position of the partly sent page, which the loop keeps alive even when the ring has dropped it.
    package var partialTimeline: Int64?
    /// The last write left bytes unsent (EPOLLOUT is armed).
    package var backedUp = false
    /// Already moved to the live edge once.
    package var moved = false
    /// Monotonic time of the last write.
    package var lastFlush = -Double.infinity
    /// Where in the stream (a timeline position) its next turn counts from: the newest page's at its last write in
    /// turn (`ListenerSchedule.wrote`); `never` before the first write with a page.
    package var writtenAt = Self.never
    package static let never = Int64.min
    /// When its session ends (`max_listener_duration`); infinity: never.
    package var endsAt = Double.infinity
}

/// How far behind the live edge a listener is.
package enum Lag: Sendable, Equatable {
    case seconds(Double)
    /// Its next page has left the ring.
    case overtaken
}

/// What the loop does at one flush of one listener.
package enum FlushAction: Sendable, Equatable {
    /// Write the remaining headers, then the pages from the cursor up to `end` (exclusive).
    case write(end: Int64)
    /// Moved to the live edge (count it, log it, forget the partly sent page), then write as `.write`.
    case moved(from: Lag, end: Int64)
    /// Too slow: disconnect.
    case drop(SlowReason)
    /// Its session is over, at a page boundary: close.
    case end
}

/// Why a slow listener was disconnected, in words for the log.
package enum SlowReason: Sendable, Equatable, CustomStringConvertible {
    case behind(seconds: Double, afterMove: Bool)
    case overtaken(afterMove: Bool)

    package var description: String {
        switch self {
        case .behind(let seconds, let afterMove):
            "too slow (\(wholeSeconds(seconds)) s behind\(afterMove ? " after a move" : ""))"
        case .overtaken(let afterMove):
            "too slow (overtaken by the ring\(afterMove ? " after a move" : " mid-page"))"
        }
    }
}

/// When a listener's next write is due.
package enum Due: Sendable, Equatable {
    case now
    case at(Double)
    /// Nothing waits for it.
    case idle
}
