/// One client of the status endpoint, confined to the status thread. It owns its socket, closed when the loop
/// forgets it. Its life: `reading` the request head, `writing` the one response, then `draining` what the client
/// still sends until it closes (a lingering close: closing with unread input would reset the connection and could
/// destroy the response before the client read it). Each phase ends by `deadline` or the connection is closed.
final class StatusConnection {
    enum Phase: Equatable {
        case reading
        case writing
        case draining
    }

    let socket: FileDescriptor
    var phase = Phase.reading
    /// Monotonic seconds by which the current phase must end.
    var deadline: Double
    /// The request head received so far (at most the request limit).
    var input: [UInt8] = []
    /// The response, and how much of it is sent.
    var output: [UInt8] = []
    var sent = 0
    /// Bytes read and discarded while draining (bounded too).
    var drained = 0

    init(socket: consuming FileDescriptor, deadline: Double) {
        self.socket = socket
        self.deadline = deadline
    }

    var fd: Int32 { socket.rawValue }
}

@available(*, unavailable) extension StatusConnection: Sendable {}
