import Synchronization

/// What the calls came to, for `/metrics` (`radio_relay_auth_*`).
package final class AuthCounters: Sendable {
    package let admitted = Atomic<Int>(0)
    package let refused = Atomic<Int>(0)
    package let failed = Atomic<Int>(0)
    /// Adds not even asked: too many waiting (in all, or from one address).
    package let overCap = Atomic<Int>(0)
    /// Adds queued or in flight now.
    package let waiting = Atomic<Int>(0)
    package let removesSent = Atomic<Int>(0)
    package let removesFailed = Atomic<Int>(0)
    package let removesUnsent = Atomic<Int>(0)

    func count(_ verdict: AuthVerdict) {
        switch verdict {
        case .admitted: admitted.add(1, ordering: .relaxed)
        case .refused: refused.add(1, ordering: .relaxed)
        case .failed: failed.add(1, ordering: .relaxed)
        }
    }
}
