import RadioRelaySystem
import Synchronization

/// An authenticated listener's session with its backend: what its `listener_remove` will say, sent exactly once
/// whichever way the listener leaves — `end` from the network loop that served it (with the reason), or, for a
/// listener dropped without it (refused a place after the backend admitted it, never served), when the last
/// reference to the session goes.
package final class ListenerSession: Sendable {
    /// The listener's ID, the `client` of both calls (the ID the listener list shows).
    package let id: ListenerID
    /// The add call, whose fields the remove repeats.
    private let call: AuthCall
    private let removeURL: SecretURL?
    private let timeout: Double
    private let authenticator: Authenticator
    /// The user it authenticated as, as a listing may show it (nil: it sent none).
    package var username: String? {
        guard let credentials = call.credentials, !credentials.user.isEmpty else { return nil }
        return credentials.shownUser
    }
    /// When the backend admitted it (monotonic seconds).
    package let began: Double
    /// When the backend's `icecast-auth-timelimit` ends its stream (monotonic seconds); nil: no limit.
    package let endsAt: Double?
    private let ended = Atomic<Bool>(false)

    package init(
        call: AuthCall, removeURL: SecretURL?, timeout: Double, authenticator: Authenticator, began: Double,
        timeLimit: Int?
    ) {
        id = call.client
        self.call = call
        self.removeURL = removeURL
        self.timeout = timeout
        self.authenticator = authenticator
        self.began = began
        endsAt = timeLimit.map { began + Double($0) }
    }

    /// The listener left for `reason`: its remove is queued (the first call only).
    package func end(_ reason: SessionEnd, now: Double = monotonicNow()) {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing), let removeURL else { return }
        var remove = call
        let seconds = now - began
        remove.action = .remove(duration: seconds.isFinite ? Int(max(0, min(seconds, 1e12))) : 0, reason: reason)
        authenticator.remove(remove, url: removeURL, timeout: timeout)
    }

    deinit { end(.notServed) }
}
