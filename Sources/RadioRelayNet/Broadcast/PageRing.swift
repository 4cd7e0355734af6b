import RadioRelayMedia
import RadioRelaySystem

/// One published Ogg page, immutable and shared by every listener: its bytes live at a fixed address for the
/// page's lifetime, so the network loop can hand them to `sendmsg` without copying.
package final class SharedPage: @unchecked Sendable {
    /// Immutable after init: safe to read from any thread.
    package let bytes: UnsafeRawBufferPointer
    /// Where the page ends on the stream-wide timeline (48 kHz samples, `OggPage.timeline`): unlike the granule
    /// position it keeps counting across chained links, so lag and burst are measured on it.
    package let timeline: Int64
    package let isContinued: Bool
    /// A later link's OpusHead or OpusTags page, sent in sequence to the listeners already there.
    package let isHeader: Bool
    /// The chained link the page belongs to: the ring index of that link's BOS page, or -1 for the first link (whose
    /// headers are set apart by `setHeaders`).
    package let link: Int64
    /// Position in the ring's sequence of published pages (not the Ogg page sequence number).
    package let index: Int64

    package init(_ page: OggPage, index: Int64, link: Int64) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: page.bytes.count, alignment: 16)
        page.bytes.withUnsafeBytes { storage.copyMemory(from: $0) }
        bytes = UnsafeRawBufferPointer(storage)
        timeline = page.timeline
        isContinued = page.isContinued
        isHeader = page.isHeader
        self.link = link
        self.index = index
    }

    /// A run of bytes that is not an Ogg page: an MP3 pass-through chunk (whole frames), or an ICY metadata block.
    package init(bytes source: [UInt8], timeline: Int64, index: Int64, link: Int64 = -1) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, source.count), alignment: 16)
        source.withUnsafeBytes { storage.copyMemory(from: $0) }
        bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[..<source.count])
        self.timeline = timeline
        isContinued = false
        isHeader = false
        self.link = link
        self.index = index
    }

    deinit { bytes.deallocate() }
}

/// The shared ring of recent pages: the pipeline thread publishes, the network loop reads. It holds a bounded
/// number of pages (enough for the burst and the lag allowance) and a bounded number of bytes (`maxBytes`: an
/// upstream whose packets are as large as their duration allows cannot make a few pages hold megabytes), the
/// oldest pages going first, so memory stays flat whatever the listeners and the upstream do.
///
/// Chained links: a BOS page starts a link, and its header pages go out in sequence like any page. They become the
/// `headers` a new listener gets first once the link's first audio page is published, so that the headers always
/// belong to the link of the newest audio (until then a new listener starts in the link before, and gets the new
/// link's header pages in sequence).
package final class PageRing: Sendable {
    private struct State {
        var pages: [SharedPage?]
        var next: Int64 = 0
        /// The oldest page held, and the bytes of the pages held.
        var oldest: Int64 = 0
        var bytes = 0
        var headers: [SharedPage] = []
        /// The link `headers` belong to, and the link of the newest page published.
        var headerLink: Int64 = -1
        var link: Int64 = -1
        /// The header pages of a link whose first audio page has not come yet.
        var pendingHeaders: [SharedPage] = []
    }

    package let capacity: Int
    /// Bytes of pages held at most (the newest page is always kept).
    package let maxBytes: Int
    private let state: LockedBox<State>

    package init(capacity: Int, maxBytes: Int = .max) {
        precondition(capacity > 1)
        self.capacity = capacity
        self.maxBytes = max(1, maxBytes)
        state = LockedBox(State(pages: Array(repeating: nil, count: capacity)))
    }

    /// The stream's header pages (OpusHead, OpusTags), sent first to every listener.
    package func setHeaders(_ pages: [OggPage]) {
        state.withLock { s in
            s.headers = pages.enumerated().map { SharedPage($0.element, index: Int64(-1 - $0.offset), link: s.link) }
            s.headerLink = s.link
        }
    }

    package var headers: [SharedPage] { state.withLock { $0.headers } }

    /// Publishes `pages` in order, under one lock, so the loop never sees a link's header pages without the rest.
    package func publish(_ pages: [OggPage]) {
        state.withLock { s in
            for page in pages {
                if page.isBeginning {
                    s.link = s.next
                    s.pendingHeaders.removeAll()
                }
                let shared = SharedPage(page, index: s.next, link: s.link)
                insert(shared, into: &s)
                if page.isHeader {
                    s.pendingHeaders.append(shared)
                } else if s.link != s.headerLink && !s.pendingHeaders.isEmpty {
                    s.headers = s.pendingHeaders
                    s.headerLink = s.link
                    s.pendingHeaders.removeAll()
                }
            }
        }
    }

    /// Publishes a run of MP3 frames (a pass-through output's ring holds no Ogg pages, and no headers).
    package func publish(_ chunk: MP3PassThrough.Chunk) {
        state.withLock { s in insert(SharedPage(bytes: chunk.bytes, timeline: chunk.timeline, index: s.next), into: &s)
        }
    }

    private func insert(_ shared: SharedPage, into s: inout State) {
        let slot = Int(s.next % Int64(capacity))
        if let replaced = s.pages[slot] { s.bytes -= replaced.bytes.count }
        s.pages[slot] = shared
        s.bytes += shared.bytes.count
        s.next += 1
        s.oldest = max(s.oldest, s.next - Int64(capacity))
        while s.bytes > maxBytes && s.oldest < s.next - 1 {
            let old = Int(s.oldest % Int64(capacity))
            s.bytes -= s.pages[old]?.bytes.count ?? 0
            s.pages[old] = nil
            s.oldest += 1
        }
    }

    /// Bytes of the pages held.
    package var bytesHeld: Int { state.withLock { $0.bytes } }

    /// Index the next published page will get.
    package var nextIndex: Int64 { state.withLock { $0.next } }

    /// Brings a view of the ring up to date: the pages it holds are `pages[start...]`, ring indices from `oldest` on.
    /// The pages that left the ring are skipped (`start` moves), the new ones appended, so the work is the pages
    /// that changed since the last call, not the ring's size (6 000 pages at `max_lag = 600`). A view the ring has
    /// left behind entirely is rebuilt. Returns the headers' link.
    package func update(
        _ pages: inout [SharedPage], start: inout Int, oldest: inout Int64, headers: inout [SharedPage]
    ) -> Int64 {
        state.withLock { s in
            var held = Int64(pages.count - start)
            if start < 0 || held < 0 || oldest + held < s.oldest || oldest + held > s.next {
                pages.removeAll(keepingCapacity: true)
                start = 0
                oldest = s.oldest
                held = 0
            } else if oldest < s.oldest {
                let left = Int(s.oldest - oldest)
                start += left
                held -= Int64(left)
                oldest = s.oldest
            }
            for i in (oldest + held)..<s.next {
                guard let page = s.pages[Int(i % Int64(capacity))] else {
                    // Cannot be (every index from `oldest` on is held); a view that starts after it stays whole.
                    pages.removeAll(keepingCapacity: true)
                    start = 0
                    oldest = i + 1
                    continue
                }
                pages.append(page)
            }
            headers = s.headers
            return s.headerLink
        }
    }

    /// A consistent view of the whole ring, oldest first, with the header pages and their link (for the network
    /// loop's per-wakeup snapshot); returns the oldest index held and the headers' link.
    package func window(into out: inout [SharedPage], headers: inout [SharedPage]) -> (oldest: Int64, headerLink: Int64)
    {
        out.removeAll(keepingCapacity: true)
        return state.withLock { s in
            var oldest = s.oldest
            for i in s.oldest..<s.next {
                guard let page = s.pages[Int(i % Int64(capacity))] else {
                    // Cannot be (every index from `oldest` on is held); a view that starts after it stays whole.
                    out.removeAll(keepingCapacity: true)
                    oldest = i + 1
                    continue
                }
                out.append(page)
            }
            headers = s.headers
            return (oldest, s.headerLink)
        }
    }
}
