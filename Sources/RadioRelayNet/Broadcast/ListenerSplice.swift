import RadioRelayMedia
import RadioRelaySystem

/// The pages of a listener moved from another output (`NetworkLoop+Move`), by its new output's ring indices: the
/// page it was partly sent when it moved (its old output's, finished first), then the ring's pages, each carried on
/// in the listener's own Ogg stream (`OggSplice`), or as they are (an MP3 output's runs of frames, or an Ogg listener
/// the destination's stream had to start a new link for). Pages are made one after another as the listener is
/// written, and forgotten once it is past them (the one before its cursor is kept: where a later move starts from),
/// so it holds a few pages, never the ring.
///
/// Confined to its network loop's thread.
package final class ListenerSplice {
    /// How the ring's pages are carried; nil: as they are.
    private(set) var ogg: OggSplice?
    /// Pages made, for indices `first ..< first + pages.count`.
    private var pages: [SharedPage] = []
    private var first: Int64

    /// - Parameters: `carried`: the page the listener was partly sent, placed at `index` (the one before the first
    ///   ring page it gets); nil: it starts at `index + 1`.
    init(ogg: OggSplice?, carried: SharedPage?, at index: Int64) {
        self.ogg = ogg
        if let carried {
            pages = [carried]
            first = index
        } else {
            first = index + 1
        }
    }

    /// Pages made at most ahead of the cursor: what one flush can send (`NetworkLoop.maxIOV` × `maxSends`).
    static let ahead = NetworkLoop.maxIOV * NetworkLoop.maxSends

    /// The page the listener gets for ring index `index`, made from `ring` when it is the next one due.
    func page(_ index: Int64, ring: RingSnapshot) -> SharedPage? {
        let end = first + Int64(pages.count)
        if index >= first && index < end { return pages[Int(index - first)] }
        guard index >= end, let source = ring.page(index) else { return nil }
        if index > end {
            // The schedule moved it on (to the live edge): it goes on from there.
            pages.removeAll(keepingCapacity: true)
            first = index
        }
        guard pages.count < Self.ahead else { return nil }
        let made: SharedPage
        if var ogg, !ogg.passing {
            let bytes = source.bytes.isEmpty ? [] : ogg.carry(source.bytes, isHeader: source.isHeader)
            self.ogg = ogg
            made = SharedPage(bytes: bytes, timeline: source.timeline, index: index, link: source.link)
        } else {
            made = source
        }
        pages.append(made)
        return made
    }

    /// The listener is at `cursor`: the pages before the one before it are forgotten.
    func trim(cursor: Int64) {
        let drop = Int(max(0, min(Int64(pages.count), cursor - 1 - first)))
        guard drop > 0 else { return }
        pages.removeFirst(drop)
        first += Int64(drop)
    }

    /// Whether pages from `cursor` on are the ring's own, so the listener no longer needs it.
    func isDone(cursor: Int64) -> Bool {
        guard ogg.map(\.passing) ?? true else { return false }
        return first + Int64(pages.count) <= cursor
    }

    /// Whether the listener's header pages are its own (its stream goes on): the destination's are never sent to it.
    var keepsHeaders: Bool { ogg.map { !$0.passing } ?? false }
}

@available(*, unavailable) extension ListenerSplice: Sendable {}
