import RadioRelayMedia
import RadioRelaySystem

/// The network loop's view of the `PageRing`, refreshed once per wake-up (one lock for all listeners): references to
/// the pages it holds, oldest first, and the header pages of the current link. It is the `PageWindow` the
/// `ListenerSchedule` reads. A refresh costs the pages published and dropped since the last one, not the ring's size:
/// the pages it holds are `storage[start...]`, and the front is cut off only every `compactAfter` dropped pages.
package struct RingSnapshot: PageWindow {
    private var storage: [SharedPage] = []
    private var start = 0
    package private(set) var headers: [SharedPage] = []
    package private(set) var oldest: Int64 = 0
    package private(set) var headerLink: Int64 = -1
    /// Dropped pages kept at the front at most (their references) before they are cut off.
    private static let compactAfter = 32

    package init() {}

    package var count: Int { storage.count - start }
    package var headerCount: Int { headers.count }

    package func timeline(at offset: Int) -> Int64 { storage[start + offset].timeline }
    package func isContinued(at offset: Int) -> Bool { storage[start + offset].isContinued }
    package func isHeader(at offset: Int) -> Bool { storage[start + offset].isHeader }
    package func link(at offset: Int) -> Int64 { storage[start + offset].link }

    /// Takes a fresh view of the ring: the pages that left are skipped and the new ones appended (the headers are a
    /// reference, not a copy).
    package mutating func refresh(from ring: PageRing) {
        headerLink = ring.update(&storage, start: &start, oldest: &oldest, headers: &headers)
        if start >= Self.compactAfter {
            storage.removeFirst(start)
            start = 0
        }
    }

    /// The page with ring index `index`, if the snapshot holds it.
    package func page(_ index: Int64) -> SharedPage? {
        guard index >= oldest && index < head else { return nil }
        return storage[start + Int(index - oldest)]
    }
}

@available(*, unavailable) extension RingSnapshot: Sendable {}
