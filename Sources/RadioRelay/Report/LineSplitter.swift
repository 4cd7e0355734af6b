/// Cuts a stream of bytes, given in pieces of any size, into lines (ending in LF): each line at most `limit` bytes,
/// gathered in one reused buffer. A longer line is not gathered: its bytes are skipped to its end and it is handed
/// on as `.tooLong`, so that a file of one endless line (a gzip bomb of zeros) costs time, never memory.
struct LineSplitter {
    enum Piece {
        case line(ArraySlice<UInt8>)
        case tooLong
        /// Bytes after the last LF at the end of the stream: a line cut short (a write the server did not finish).
        case partial
    }

    let limit: Int
    private var pending: [UInt8] = []
    private var skipping = false
    /// Lines handed on so far (the number of the last one, for FILE:LINE).
    private(set) var number = 0

    init(limit: Int) {
        self.limit = max(1, limit)
        pending.reserveCapacity(min(self.limit, 64 * 1024))
    }

    /// Hands on every line that ends in `bytes`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, _ handle: (Piece, Int) -> Void) {
        var start = 0
        while start < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
            guard let newline = rest.firstIndex(of: 0x0A) else {
                take(rest)
                return
            }
            take(UnsafeRawBufferPointer(rebasing: rest[rest.startIndex..<newline]))
            number += 1
            if skipping {
                handle(.tooLong, number)
            } else {
                handle(.line(pending[...]), number)
            }
            pending.removeAll(keepingCapacity: true)
            skipping = false
            start += newline - rest.startIndex + 1
        }
    }

    /// The end of the stream: what is left without its LF, if anything, is a partial line.
    mutating func finish(_ handle: (Piece, Int) -> Void) {
        guard skipping || !pending.isEmpty else { return }
        number += 1
        handle(skipping ? .tooLong : .partial, number)
        pending.removeAll(keepingCapacity: true)
        skipping = false
    }

    /// Gathers bytes of the current line, or skips them once it is over the limit.
    private mutating func take(_ bytes: UnsafeRawBufferPointer) {
        guard !skipping, !bytes.isEmpty else { return }
        if pending.count + bytes.count > limit {
            skipping = true
            pending.removeAll(keepingCapacity: true)
            return
        }
        pending.append(contentsOf: bytes)
    }
}
