import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Read-ahead of a paced upstream: bytes read before the clock reaches them. Bounded: once `limit` bytes wait, the
/// upstream is not read (TCP holds the rest back).
struct Backlog {
    let limit: Int
    private var bytes: [UInt8] = []
    private var start = 0

    init(limit: Int) { self.limit = limit }

    var count: Int { bytes.count - start }
    var isEmpty: Bool { count == 0 }
    var isFull: Bool { count >= limit }

    mutating func append(_ chunk: UnsafeRawBufferPointer) { bytes.append(contentsOf: chunk) }

    /// Hands at most `limit` bytes from the front to `body`; they are consumed even when `body` throws.
    mutating func consume(upTo limit: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        let n = min(limit, count)
        guard n > 0 else { return }
        let first = start
        start += n
        try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[first..<first + n])) }
    }

    /// Forgets everything held (the upstream connection it came from is gone).
    mutating func clear() {
        bytes.removeAll(keepingCapacity: true)
        start = 0
    }

    /// Gives back the space of consumed bytes once there is enough of it.
    mutating func compact() {
        if start == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            start = 0
        } else if start > limit {
            bytes.removeFirst(start)
            start = 0
        }
    }
}
