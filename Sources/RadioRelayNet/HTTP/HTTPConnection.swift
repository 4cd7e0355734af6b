import RadioRelayMedia
import RadioRelaySystem

/// One client of an HTTP server loop (`HTTPConnectionLoop`), confined to its thread. Its life: `reading` the
/// request head; then `writing` the answer, and either `reading` again (a kept connection, `idle` until its next
/// request starts) or `draining` what the client still sends until it closes; or, on the public address, handed to
/// a station (its socket leaves with it) or kept as an `events` subscriber until it leaves. Every phase but `events`
/// ends by `deadline` or the connection is closed.
package final class HTTPConnection {
    package enum Phase: Equatable {
        case reading
        case writing
        case draining
        /// A title event stream of the mount at this path.
        case events(mount: String)
    }

    /// Owned until handed over (`takeSocket`); closed with the connection otherwise.
    private var socket: FileDescriptor?
    package let fd: Int32
    /// The client: the connection's peer, or the source its PROXY header names once read.
    package var peer: SocketAddress { didSet { hostKey = HostKey(peer) } }
    package private(set) var hostKey: HostKey
    /// The reverse proxy (`forwarded_from`) the connection came from, once a request's header named its client
    /// (`peer` is that client then, request by request: a proxy's kept connection carries many clients' requests).
    package var forwarder: SocketAddress?
    /// The address it counts as pending from while it sends its head (`HTTPConnectionLoop.maxPendingPerAddress`).
    package var pendingHost: HostKey?
    package var phase = Phase.reading
    /// Monotonic seconds by which the current phase must end (set through the loop's `setDeadline`).
    package var deadline: Double
    /// The request head received so far (at most the request limit).
    package var input: [UInt8] = []
    /// How far `input` has been looked at (`HTTPHeadScan`).
    package var headScan = HTTPHeadScan()
    /// Bytes to send — `output` then `body` (a segment's bytes, shared, not copied) — and how much of them is sent.
    package var output: [UInt8] = []
    package var body: [UInt8] = []
    package var sent = 0
    /// The answer being sent keeps the connection for another request (HLS), and answers sent on it so far.
    package var keepAlive = false
    package var answered = 0
    /// The client sent more than its request head (a pipelined request): its answer closes the connection.
    package var pipelined = false
    /// What came after the head in the same reads (a live source's first audio), kept until the head is acted on.
    package var afterHead: [UInt8] = []
    /// Waiting for its next request after a kept answer: not counted as a pending head until bytes come.
    package var idle = false
    /// Bytes read and dropped since the answer (bounded too).
    package var drained = 0
    /// An event subscriber's schedule, its entry in the roster and its request (for its access-log line).
    package var events: EventStream?
    package var listener: ListenerEntry?
    package var request: ListenerRequest?
    /// Where its leave is noted (its server's, not its station's: a subscriber must not keep a replaced station).
    package var admission: ListenerAdmission?
    package var accessLog: AccessLog?
    /// Whether `EPOLLOUT` is armed (an event subscriber whose socket is backed up).
    package var waitsForOutput = false

    package init(socket: consuming FileDescriptor, peer: SocketAddress, deadline: Double) {
        fd = socket.rawValue
        self.socket = consume socket
        self.peer = peer
        hostKey = HostKey(peer)
        self.deadline = deadline
    }

    /// Hands the socket on (once): the connection no longer closes it.
    package func takeSocket() -> FileDescriptor? { socket.take() }

    package var unsent: Int { output.count + body.count - sent }
}

extension HTTPConnection.Phase {
    /// Whether the phase ends by the connection's deadline (all but an event stream, which lasts).
    package var isTimed: Bool {
        if case .events = self { return false }
        return true
    }
}

@available(*, unavailable) extension HTTPConnection: Sendable {}
