import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// Reads one connection's PROXY header off its socket, and never a byte past it: what follows the header (an HTTP
/// request) stays in the socket for whoever reads next.
///
/// Each step peeks (`MSG_PEEK`) at what the socket holds, decides with `ProxyHeader.parse` over the bytes consumed
/// so far plus those, then consumes: everything peeked while the header is still incomplete (every one of those
/// bytes belongs to it: a v2 header is shorter than its length field says, a v1 line has no CRLF yet), or exactly
/// the rest of the header once it is decided. Consuming what was peeked keeps a level-triggered socket from
/// reporting the same bytes again and again while the rest of the header is on its way.
package struct ProxyHeaderReader: Sendable {
    /// Seconds from accept a connection has to send its whole header: the spec's advice is a short timeout, at
    /// least 3 s to cover a TCP retransmit (the header normally comes with the connection's first segment).
    package static let allowance = 3.0

    /// The header's bytes consumed so far.
    package private(set) var received: [UInt8] = []

    package init() {}

    /// How many bytes the next peek may look at: no header is longer.
    package var room: Int { ProxyHeader.maxLength - received.count }

    /// The decision over what was consumed so far and `peeked` (what the socket holds after that), and how many of
    /// the peeked bytes to consume now: all of them while incomplete, the rest of the header once decided, none
    /// when invalid (the connection is closed).
    package mutating func take(_ peeked: some Collection<UInt8>) -> (consume: Int, result: ProxyHeader.Result) {
        let bytes = received + peeked.prefix(room)
        let result = ProxyHeader.parse(bytes)
        let end: Int
        switch result {
        case .invalid: return (0, result)
        case .incomplete: end = bytes.count
        case .proxied, .unknown, .local: end = min(bytes.count, max(received.count, result.length ?? 0))
        }
        let consume = end - received.count
        received = Array(bytes[..<end])
        return (consume, result)
    }

    /// Where a socket's header stands after one step.
    package enum Step: Equatable, Sendable {
        /// More is needed; the socket will say when it has more.
        case waiting
        /// The header is read (`.proxied`, `.unknown` or `.local`); the socket holds what follows it.
        case done(ProxyHeader.Result)
        /// No valid header, or the connection failed or closed before one: close it.
        case failed(String)
    }

    /// One step on a non-blocking socket, with `scratch` (at least `ProxyHeader.maxLength` bytes) to peek into.
    package mutating func step(_ fd: Int32, scratch: inout [UInt8]) -> Step {
        let room = min(room, scratch.count)
        let peeked: IOResult<Int>
        do {
            peeked = try nonblockingSyscall("recv") {
                scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, room, Int32(MSG_PEEK)) }
            }
        } catch {
            return .failed("read failed: \(String(cString: strerror(error.errno)))")
        }
        guard case .done(let count) = peeked else { return .waiting }
        guard count > 0 else { return .failed("closed before its PROXY header") }
        let (consume, result) = take(scratch[..<count])
        if consume > 0 {
            // The bytes are in the socket already (peeked), so one read takes exactly them.
            let read = scratch.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, consume) }
            guard read == consume else { return .failed("read failed consuming its PROXY header") }
        }
        switch result {
        case .incomplete: return .waiting
        case .invalid(let reason): return .failed(reason)
        case .proxied, .unknown, .local: return .done(result)
        }
    }
}

/// The connections still owing their PROXY header, as a pure value on virtual time: at most `capacity` at once (1024
/// by default), each for at most `timeout` seconds from its accept (`ProxyHeaderReader.allowance`). A connection
/// that finds it full, or outstays its deadline, is closed by the loop that owns it.
package struct ProxyHeaderWait<Key: Hashable, Entry> {

    package let capacity: Int
    package let timeout: Double
    private var entries: [Key: Entry] = [:]
    /// Their deadlines: expiring looks only at the due ones.
    private var deadlines = DeadlineHeap<Key>()

    package init(capacity: Int = 1024, timeout: Double = ProxyHeaderReader.allowance) {
        self.capacity = capacity
        self.timeout = timeout
    }

    package var count: Int { entries.count }
    package var isEmpty: Bool { entries.isEmpty }

    package subscript(key: Key) -> Entry? { entries[key] }

    /// Lets a fresh connection wait until `now + timeout`; false (nothing kept) when `capacity` are waiting already.
    package mutating func enter(_ key: Key, _ entry: Entry, now: Double) -> Bool {
        guard entries.count < capacity || entries[key] != nil else { return false }
        entries[key] = entry
        deadlines.set(key, now + timeout)
        return true
    }

    /// Ends a connection's wait (its header came, or it failed); the entry, if it was waiting.
    @discardableResult
    package mutating func leave(_ key: Key) -> Entry? {
        deadlines.remove(key)
        return entries.removeValue(forKey: key)
    }

    /// Ends the wait of every connection whose deadline is `now` or earlier, and returns them.
    package mutating func expire(now: Double) -> [Entry] {
        deadlines.popExpired(now: now).compactMap { entries.removeValue(forKey: $0) }
    }

    /// The earliest deadline (nil when nobody waits): the owning loop wakes up by then.
    package var nextDeadline: Double? {
        mutating get { deadlines.first()?.deadline }
    }
}
