import RadioRelayMedia
import RadioRelaySystem

/// How a listener reached its station.
package enum ListenerProtocol: String, Sendable {
    /// Raw TCP on the station's own port: the stream from the first byte.
    case tcp
    /// An HTTP request for the station's mount on the shared HTTP address: a response head, then the stream.
    case http
}

/// A connection the HTTP front end hands to a station's network loop once its request is read: the socket, the
/// peer, and the response head the loop sends before the stream's first byte. Moved from the front end's thread to
/// the loop's through the Broadcaster's queue of arrivals, never touched by two threads at once.
package final class ArrivingListener: @unchecked Sendable {
    private var socket: FileDescriptor?
    package let peer: SocketAddress
    package let responseHead: [UInt8]

    package init(socket: consuming FileDescriptor, peer: SocketAddress, responseHead: [UInt8]) {
        self.socket = consume socket
        self.peer = peer
        self.responseHead = responseHead
    }

    /// The socket, handed over once (nil afterwards). A socket never taken closes with this value.
    package func takeSocket() -> FileDescriptor? {
        socket.take()
    }
}

extension Broadcaster {
    /// Arrivals queued at most: beyond, the front end answers 503 (the loop is far behind, or stopped).
    package static let arrivalLimit = 4096

    /// Queues an HTTP listener for the network loop, which admits it like a raw listener (limits, per-address
    /// counts, burst) and sends `responseHead` first. False when the queue is full: the caller keeps answering.
    package func handOver(_ arrival: ArrivingListener) -> Bool {
        let queued = arrivals.withLock { queue in
            guard queue.count < Self.arrivalLimit else { return false }
            queue.append(arrival)
            return true
        }
        if queued { signal(arrivedEvent, "a listener") }
        return queued
    }

    /// The arrivals queued since the last call, oldest first (on the network thread).
    package func takeArrivals() -> [ArrivingListener] {
        arrivals.withLock { queue in
            guard !queue.isEmpty else { return [] }
            defer { queue.removeAll() }
            return queue
        }
    }
}
