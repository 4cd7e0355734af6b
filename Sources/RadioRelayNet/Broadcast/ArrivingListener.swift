import RadioRelayMedia
import RadioRelaySystem

/// A connection the HTTP front end hands to a station's network loop once its request is read: the socket, the
/// peer, and the response head the loop sends before the stream's first byte. Moved from the front end's thread to
/// the loop's through the pool loop's queue of commands, never touched by two threads at once.
package final class ArrivingListener: @unchecked Sendable {
    private var socket: FileDescriptor?
    package let peer: SocketAddress
    package let responseHead: [UInt8]
    package let kind: ListenerProtocol
    package let request: ListenerRequest?
    /// A protected station's listener: its session with the backend (its ID, its remove, its time limit).
    package let session: ListenerSession?
    /// The answer to send, best effort, when the admission point does not admit it (in the words of the front end
    /// that handed it over).
    package let refusal: @Sendable (AdmissionDecision) -> [UInt8]

    package init(
        socket: consuming FileDescriptor, peer: SocketAddress, responseHead: [UInt8], kind: ListenerProtocol = .http,
        request: ListenerRequest? = nil, session: ListenerSession? = nil,
        refusal: @escaping @Sendable (AdmissionDecision) -> [UInt8] = { _ in [] }
    ) {
        self.socket = consume socket
        self.peer = peer
        self.responseHead = responseHead
        self.kind = kind
        self.request = request
        self.session = session
        self.refusal = refusal
    }

    /// The socket, handed over once (nil afterwards). A socket never taken closes with this value.
    package func takeSocket() -> FileDescriptor? {
        socket.take()
    }
}

extension Broadcaster {
    /// Queues an HTTP listener for the pool loop with the fewest connections, which admits it like a raw listener
    /// (limits, per-address counts, burst) and sends `responseHead` first. False when that loop's queue is full:
    /// the caller keeps answering.
    package func handOver(_ arrival: ArrivingListener) -> Bool {
        pool.handOver(arrival, of: self, to: pool.assign())
    }
}
