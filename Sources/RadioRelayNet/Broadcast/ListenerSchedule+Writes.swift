import RadioRelaySystem

/// When a listener is written: in turns of audio after page publications, at once while backed up, at a fallback
/// deadline when pages wait; when a backed-up listener is looked at again; how long the loop sleeps.
extension ListenerSchedule {
    /// Whether the listener is written now. Writes follow page publications: a listener is written once ¾ of the
    /// interval of audio has been published since its last write (a page a little short must not push a write a
    /// whole page later), and at every check while its socket is backed up (to check its lag). Otherwise, if pages
    /// wait, a fallback deadline of two intervals catches an upstream that delivers in bursts.
    ///
    /// Turns are counted in stream time, not by the clock: pages are published early and late (an encoder's, a
    /// relayed link's jitter: the demo station's come 64–130 ms apart), and a turn counted from the moment of the
    /// write let the listeners due at the next page in with those due now whenever two gaps together made ¾ of the
    /// interval; listeners written together stayed together, until one publication in three wrote the whole audience
    /// and the others none (`FlushPolicyTests.jitteredPagesDoNotMergeTheWrites`). Counted in audio, the groups an
    /// interval makes (a third of the listeners at each 100 ms page for 300 ms) stay as the listeners' arrivals made
    /// them.
    package func due(_ state: ListenerState, now: Double, window: some PageWindow) -> Due {
        if state.backedUp || isTurn(state, window) { return .now }
        guard hasPending(state, window) else { return .idle }
        return .at(state.lastFlush + 2 * flushInterval)
    }

    /// Whether ¾ of the interval of audio has been published since the listener's last write in turn (or it has
    /// no turn to count from).
    private func isTurn(_ state: ListenerState, _ window: some PageWindow) -> Bool {
        guard let (published, _) = sinceTurn(state, window) else { return true }
        return Double(published) >= turnGranules
    }

    /// Notes a write at `now`: when it was (the fallback deadline counts from it) and where in the stream its next
    /// turn counts from. A write in turn counts from the newest page's timeline position; one a whole interval or
    /// more late (the upstream stalled, then a burst of pages came) from the last interval boundary of the
    /// listener's own phase before it, so the audience a burst writes at once splits into its groups again at the
    /// next pages. A write out of turn (a backed-up socket drained, a recheck) leaves the turn where it was.
    package func wrote(_ state: inout ListenerState, now: Double, window: some PageWindow) {
        state.lastFlush = now
        guard let live = window.newestTimeline else { return }
        guard let (published, newest) = sinceTurn(state, window) else {
            state.writtenAt = live
            return
        }
        guard Double(published) >= turnGranules else { return }
        // The interval in whole granules (a validated interval is a few seconds at most; anything else: none).
        let step = flushInterval * Self.granuleRate
        let stepGranules = step >= 1 && step < 1e12 ? Int64(step.rounded(.down)) : 0
        guard stepGranules > 0, published >= stepGranules else {
            state.writtenAt = newest
            return
        }
        // Whole intervals, at most `published` (so between the listener's last turn and the newest page).
        state.writtenAt &+= published / stepGranules * stepGranules
    }

    /// The audio a turn waits for, in granules: ¾ of the interval.
    private var turnGranules: Double { flushInterval * 0.75 * Self.granuleRate }

    /// The audio published since the listener's last write in turn, and the newest page's timeline position; nil
    /// when there is no turn to count from: no page yet, never written, or the stream's timeline went back (a new
    /// ring).
    private func sinceTurn(_ state: ListenerState, _ window: some PageWindow) -> (published: Int64, newest: Int64)? {
        guard let newest = window.newestTimeline, state.writtenAt != ListenerState.never else { return nil }
        let published = newest &- state.writtenAt
        return published >= 0 ? (published, newest) : nil
    }

    /// When a listener whose socket is backed up is looked at again if it does not drain first (its `EPOLLOUT`
    /// flushes it as soon as it does): when its lag would cross the next line — `maxLag` (moved, or dropped after a
    /// move), then twice it (dropped mid-page) — at the stream's pace, and never sooner than `recheckFloor` (so a
    /// listener just at a line is looked at every 100 ms until its lag, which grows a page at a time, is past it). So a
    /// stalled listener costs the loop nothing between those moments, however many there are, instead of a
    /// `sendmsg` at every publication.
    package func recheck(_ state: ListenerState, now: Double, window: some PageWindow) -> Double {
        var next = Self.recheckFloor
        // Lag grows a page at a time: a listener exactly at a line has not crossed it, and is looked at again soon.
        if case .seconds(let lag) = lag(of: state, in: window) {
            if lag <= maxLag {
                next = maxLag - lag
            } else if !state.moved && lag <= 2 * maxLag {
                next = 2 * maxLag - lag
            }
        }
        // A little past the line, so the check finds it crossed; bounded whatever the lag (NaN, infinity).
        let wait = next + Self.recheckFloor
        return now + (wait.isFinite ? min(max(wait, Self.recheckFloor), 2 * maxLag) : Self.recheckFloor)
    }

    /// The shortest wait between two looks at a backed-up listener.
    package static let recheckFloor = 0.1

    /// Headers or pages the listener has not been sent yet.
    package func hasPending(_ state: ListenerState, _ window: some PageWindow) -> Bool {
        guard let cursor = state.cursor else { return state.headersSent < window.headerCount || window.count > 0 }
        return state.headersSent < state.headerCount || cursor < window.head
    }

    /// How long the loop may sleep: until the earliest deadline, at most `cap` ms, rounded up so it does not wake
    /// just before it. Never converts a non-finite or out-of-range value to an integer.
    package static func waitMilliseconds(until deadline: Double?, now: Double, cap: Int32 = 500) -> Int32 {
        EventLoop.waitMilliseconds(until: deadline, now: now, cap: cap)
    }
}
