/// One published Ogg page, immutable and shared by every listener: its bytes live at a fixed address for the
/// page's lifetime, so the network loop can hand them to `sendmsg` without copying.
package final class SharedPage: @unchecked Sendable {
    /// Immutable after init: safe to read from any thread.
    package let bytes: UnsafeRawBufferPointer
    package let granulePosition: Int64
    package let isContinued: Bool
    /// Position in the ring's sequence of published pages (not the Ogg page sequence number).
    package let index: Int64

    init(_ page: OggPage, index: Int64) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: page.bytes.count, alignment: 16)
        page.bytes.withUnsafeBytes { storage.copyMemory(from: $0) }
        bytes = UnsafeRawBufferPointer(storage)
        granulePosition = page.granulePosition
        isContinued = page.isContinued
        self.index = index
    }

    deinit { bytes.deallocate() }
}

/// The shared ring of recent pages: the pipeline thread publishes, the network loop reads. It holds a bounded
/// number of pages (enough for the burst and the lag allowance), so memory stays flat whatever the listeners do.
package final class PageRing: Sendable {
    private struct State {
        var pages: [SharedPage?]
        var next: Int64 = 0
        var headers: [SharedPage] = []
    }

    package let capacity: Int
    private let state: LockedBox<State>

    package init(capacity: Int) {
        precondition(capacity > 1)
        self.capacity = capacity
        state = LockedBox(State(pages: Array(repeating: nil, count: capacity)))
    }

    /// The stream's header pages (OpusHead, OpusTags), sent first to every listener.
    package func setHeaders(_ pages: [OggPage]) {
        let shared = pages.enumerated().map { SharedPage($0.element, index: Int64(-1 - $0.offset)) }
        state.withLock { $0.headers = shared }
    }

    package var headers: [SharedPage] { state.withLock { $0.headers } }

    package func publish(_ page: OggPage) {
        state.withLock { s in
            let shared = SharedPage(page, index: s.next)
            s.pages[Int(s.next % Int64(capacity))] = shared
            s.next += 1
        }
    }

    /// Index the next published page will get.
    package var nextIndex: Int64 { state.withLock { $0.next } }

    /// Copies references to the pages from `first` on (at most `limit`) into `out`; returns the oldest index still
    /// held, so a caller behind it knows it was overtaken.
    @discardableResult
    package func pages(from first: Int64, limit: Int, into out: inout [SharedPage]) -> Int64 {
        state.withLock { s in
            let oldest = max(0, s.next - Int64(capacity))
            var i = max(first, oldest)
            while i < s.next && out.count < limit {
                out.append(s.pages[Int(i % Int64(capacity))]!)
                i += 1
            }
            return oldest
        }
    }

    /// A consistent view of the whole ring, oldest first (for the network loop's per-wakeup snapshot).
    package func window(into out: inout [SharedPage]) -> Int64 {
        out.removeAll(keepingCapacity: true)
        return pages(from: 0, limit: capacity, into: &out)
    }
}
