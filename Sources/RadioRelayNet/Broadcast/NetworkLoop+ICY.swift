import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// Where one listener that asked for titles in band (`Icy-MetaData: 1`) is in its ICY framing: a metadata block after
/// every `interval` bytes of audio, counted on its own bytes (listeners join at different places, so each has its own
/// count). The audio bytes still go out straight from the shared ring; the blocks are shared too.
package struct ICYCursor {
    package let interval: Int
    /// Audio bytes to send before the next block.
    package var untilBlock: Int
    /// A block that is partly sent (it goes on before any more audio), and how much of it is.
    package var block: SharedPage?
    package var blockSent = 0
    /// The newest title block it was sent: the next is the empty block until the title changes (Icecast's rule).
    package var lastTitle: SharedPage?

    package init(interval: Int) {
        self.interval = interval
        untilBlock = interval
    }
}

/// Sending the stream to a listener with ICY framing: the same iovecs into the ring's pages, cut at each block's
/// place, with the block between the two parts.
extension NetworkLoop {
    /// The block a listener gets when the title did not change since its last one.
    static let emptyICYBlock = SharedPage(bytes: ICYMetadataBlock.empty, timeline: 0, index: -1)

    /// Adds the pages from `first` up to `end` (the first from `offset`) to the iovecs, with the blocks where they
    /// fall. The blocks are noted in `icyInserted` (emptied by `send`), in order, for `advanceICY`.
    func addICYPages(
        _ listener: Listener, from first: Int64, to end: Int64, offset start: Int, count: inout Int, total: inout Int
    ) {
        guard let icy = listener.icy else { return }
        var until = icy.untilBlock
        var lastTitle = icy.lastTitle
        if let block = icy.block {
            guard count < Self.maxIOV else { return }
            total += add(block.bytes, from: icy.blockSent, at: count)
            count += 1
            until = icy.interval
        }
        var index = first
        var offset = start
        while index < end && count < Self.maxIOV {
            guard let page = page(index, for: listener) else { break }
            while offset < page.bytes.count && count < Self.maxIOV {
                if until == 0 {
                    let block = icyBlock.flatMap { $0 === lastTitle ? nil : $0 } ?? Self.emptyICYBlock
                    if block !== Self.emptyICYBlock { lastTitle = block }
                    icyInserted.append(block)
                    total += add(block.bytes, from: 0, at: count)
                    count += 1
                    until = icy.interval
                    continue
                }
                let length = min(page.bytes.count - offset, until)
                total += add(page.bytes, from: offset, length: length, at: count)
                count += 1
                offset += length
                until -= length
            }
            guard offset == page.bytes.count else { break }
            offset = 0
            index += 1
        }
    }

    /// Moves the listener on by `written` bytes of what `addICYPages` put in the iovecs (after the response head).
    func advanceICY(_ listener: Listener, by written: Int) {
        guard var icy = listener.icy else { return }
        defer { listener.icy = icy }
        var remaining = written
        var inserted = 0
        while remaining > 0 {
            if let block = icy.block {
                let sent = min(remaining, block.bytes.count - icy.blockSent)
                icy.blockSent += sent
                remaining -= sent
                if icy.blockSent == block.bytes.count {
                    icy.block = nil
                    icy.blockSent = 0
                    icy.untilBlock = icy.interval
                }
                continue
            }
            if icy.untilBlock == 0 {
                // Cannot run out: the iovecs had a block at this place.
                guard inserted < icyInserted.count else { return }
                let block = icyInserted[inserted]
                inserted += 1
                icy.block = block
                icy.blockSent = 0
                if block !== Self.emptyICYBlock { icy.lastTitle = block }
                continue
            }
            guard let cursor = listener.state.cursor, let page = page(cursor, for: listener) else { return }
            let sent = min(remaining, page.bytes.count - listener.state.offset, icy.untilBlock)
            remaining -= sent
            icy.untilBlock -= sent
            advance(listener, in: page, at: cursor, by: sent)
        }
    }
}
