import RadioRelayMedia
import RadioRelaySystem

/// The network loop's view of the `PageRing`, refreshed once per wake-up (one lock for all listeners): references to
/// the pages it holds, oldest first, and the header pages of the current link. It is the `PageWindow` the
/// `ListenerSchedule` reads.
struct RingSnapshot: PageWindow {
    private(set) var pages: [SharedPage] = []
    private(set) var headers: [SharedPage] = []
    private(set) var oldest: Int64 = 0
    private(set) var headerLink: Int64 = -1

    var count: Int { pages.count }
    var headerCount: Int { headers.count }

    func timeline(at offset: Int) -> Int64 { pages[offset].timeline }
    func isContinued(at offset: Int) -> Bool { pages[offset].isContinued }
    func isHeader(at offset: Int) -> Bool { pages[offset].isHeader }
    func link(at offset: Int) -> Int64 { pages[offset].link }

    /// Takes a fresh view of the ring, reusing the array's storage (the headers are a reference, not a copy).
    mutating func refresh(from ring: PageRing) {
        (oldest, headerLink) = ring.window(into: &pages, headers: &headers)
    }

    /// The page with ring index `index`, if the snapshot holds it.
    func page(_ index: Int64) -> SharedPage? {
        guard index >= oldest && index < head else { return nil }
        return pages[Int(index - oldest)]
    }
}

@available(*, unavailable) extension RingSnapshot: Sendable {}
