import RadioRelayMedia
import RadioRelaySystem

/// The network loop's view of the `PageRing`, refreshed once per wake-up (one lock for all listeners): references to
/// the pages it holds, oldest first, and the header pages of the current link. It is the `PageWindow` the
/// `ListenerSchedule` reads.
package struct RingSnapshot: PageWindow {
    package private(set) var pages: [SharedPage] = []
    package private(set) var headers: [SharedPage] = []
    package private(set) var oldest: Int64 = 0
    package private(set) var headerLink: Int64 = -1

    package init() {}

    package var count: Int { pages.count }
    package var headerCount: Int { headers.count }

    package func timeline(at offset: Int) -> Int64 { pages[offset].timeline }
    package func isContinued(at offset: Int) -> Bool { pages[offset].isContinued }
    package func isHeader(at offset: Int) -> Bool { pages[offset].isHeader }
    package func link(at offset: Int) -> Int64 { pages[offset].link }

    /// Takes a fresh view of the ring, reusing the array's storage (the headers are a reference, not a copy).
    package mutating func refresh(from ring: PageRing) {
        (oldest, headerLink) = ring.window(into: &pages, headers: &headers)
    }

    /// The page with ring index `index`, if the snapshot holds it.
    package func page(_ index: Int64) -> SharedPage? {
        guard index >= oldest && index < head else { return nil }
        return pages[Int(index - oldest)]
    }
}

@available(*, unavailable) extension RingSnapshot: Sendable {}
