import RadioRelayMedia
import RadioRelaySystem

/// The pages of a listener moved from another output (`NetworkLoop+Move`), by its new output's ring indices: the
/// page it was partly sent when it moved (its old output's, finished first), then the ring's pages — as they are (an
/// MP3 output's runs of frames), or carried on in the listener's own Ogg stream by a `SplicedStream`, which the
/// listeners moved together share.
///
/// Confined to its network loop's thread.
package final class ListenerSplice {
    /// The page it was partly sent, at `carriedIndex`; nil once it is past it.
    private var carried: SharedPage?
    private let carriedIndex: Int64
    /// Its Ogg stream's pages; nil: the ring's as they are.
    let stream: SplicedStream?

    /// - Parameters: `carried`: the page the listener was partly sent, placed at `index` (the one before the first
    ///   ring page it gets).
    init(stream: SplicedStream?, carried: SharedPage?, at index: Int64) {
        self.stream = stream
        self.carried = carried
        carriedIndex = index
    }

    /// The page the listener gets for ring index `index`.
    func page(_ index: Int64, ring: RingSnapshot) -> SharedPage? {
        if index == carriedIndex, let carried { return carried }
        guard let stream else { return ring.page(index) }
        return stream.page(index, ring: ring)
    }

    /// The listener is at `cursor`: the carried page is forgotten once it is past it.
    func trim(cursor: Int64) {
        if cursor > carriedIndex + 1 { carried = nil }
    }

    /// Whether pages from `cursor` on are the ring's own, so the listener no longer needs it.
    func isDone(cursor: Int64) -> Bool {
        guard carried == nil || cursor > carriedIndex else { return false }
        guard let stream else { return true }
        return stream.passingFrom.map { cursor >= $0 } ?? false
    }

    /// Whether the listener's header pages are its own (its stream goes on): the destination's are never sent to it.
    var keepsHeaders: Bool { stream.map { $0.passingFrom == nil } ?? false }
}

@available(*, unavailable) extension ListenerSplice: Sendable {}

/// An output's pages carried on in one moved listener's Ogg stream (`OggSplice`), made once each, in order, for every
/// listener that needs the same ones: the listeners moved together from one output are at one place in one stream
/// (its serial, page sequence and granules) and start at one page of the destination, so they share it, and a move of
/// thousands costs the destination one copy of each page, not one per listener. It keeps the pages made within the
/// ring's capacity of the newest, so it holds at most what the ring holds.
///
/// Confined to its network loop's thread.
package final class SplicedStream {
    /// What it started from: listeners moved with the same share it (`NetworkLoop.splicedStream`).
    let origin: OggSplice
    let start: Int64
    private var ogg: OggSplice
    /// Pages made, for indices `first ..< first + pages.count`.
    private var pages: [SharedPage] = []
    private var first: Int64
    private let keep: Int
    /// The index from which its pages are the ring's own (after a new link), once it is known.
    private(set) var passingFrom: Int64?

    init(_ ogg: OggSplice, start: Int64, keep: Int) {
        origin = ogg
        self.ogg = ogg
        self.start = start
        first = start
        self.keep = max(16, keep)
    }

    /// The page for ring index `index`, made (with those before it not made yet) from `ring`; nil when it is not in
    /// the ring yet, or left behind.
    func page(_ index: Int64, ring: RingSnapshot) -> SharedPage? {
        var end = first + Int64(pages.count)
        if index >= first && index < end { return pages[Int(index - first)] }
        guard index >= end, ring.page(index) != nil else { return nil }
        if ring.page(end) == nil || index - end > Int64(keep) {
            // What comes before it is gone from the ring: it goes on from here (a forward jump of its granules).
            pages.removeAll(keepingCapacity: true)
            first = index
            end = index
        }
        while end <= index {
            guard let source = ring.page(end) else { return nil }
            let made: SharedPage
            if ogg.passing {
                made = source
            } else {
                let bytes = source.bytes.isEmpty ? [] : ogg.carry(source.bytes, isHeader: source.isHeader)
                made = SharedPage(bytes: bytes, timeline: source.timeline, index: end, link: source.link)
                if ogg.passing { passingFrom = end + 1 }
            }
            pages.append(made)
            end += 1
        }
        if pages.count > keep {
            let drop = pages.count - keep
            pages.removeFirst(drop)
            first += Int64(drop)
        }
        return pages.last
    }
}

@available(*, unavailable) extension SplicedStream: Sendable {}
