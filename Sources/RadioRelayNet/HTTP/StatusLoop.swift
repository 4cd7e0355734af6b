import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// What a status endpoint answers, and what it judges each time its loop comes round: the service layer's side of
/// the status endpoint (`StatusServer`'s stations, their watchdogs, the router and the access rules).
package protocol StatusResponder: AnyObject {
    /// Before each sleep, at least every `StatusLoop.tick` ms: judge what answers are made from (the stations'
    /// heartbeats), so `/health` answers from what the loop saw, not from one look.
    func comeRound(now: Double)
    /// The one answer to a request (its head as parsed, or why it could not be).
    func answer(_ head: HTTPRequestHead.Result) -> StatusAnswer
}

/// A status endpoint's answer: its bytes now, or once a station answered a command (`CommandTicket`), made by
/// `render` from the outcome (nil: none came in time).
package enum StatusAnswer {
    case now([UInt8])
    case awaiting(CommandTicket, render: (CommandOutcome?) -> [UInt8])
}

/// The loop of a status endpoint, confined to its thread, on the `EventLoop` skeleton: connections straight from
/// its clients (no balancer in front), one request each, read and answered with the limits of the shared
/// `HTTPConnectionLoop` (deadlines, places, a per-address cap on unfinished heads). What it answers is the
/// `StatusResponder`'s decision.
package final class StatusLoop {
    /// The longest sleep, in milliseconds: the responder comes round at least four times a second.
    package static let tick: Int32 = 250
    /// Connections accepted per wake-up at most.
    private static let acceptBatch = 64

    private let responder: any StatusResponder
    /// Request heads, answers, deadlines and per-address caps, shared with the HTTP front end.
    private let http: HTTPConnectionLoop

    package init(
        listenFD: Int32, wakeFD: Int32, headerTimeout: Double, maxRequestBytes: Int, maxConnections: Int,
        maxPendingPerAddress: Int, activity: LoopActivity, responder: any StatusResponder
    ) throws(SystemError) {
        self.responder = responder
        http = try HTTPConnectionLoop(
            label: "status", listenFD: listenFD, wakeFD: wakeFD, epollCapacity: 64, acceptBatch: Self.acceptBatch,
            tick: Self.tick, headerTimeout: headerTimeout, maxRequestBytes: maxRequestBytes, maxOpen: maxConnections,
            maxPendingPerAddress: maxPendingPerAddress, activity: activity)
        http.readPending = { [unowned self] connection in serve(connection, mask: 0) }
    }

    /// Serves until `thread` is asked to stop. A failing `epoll_wait` is thrown: the loop cannot go on.
    package func run(in thread: ServiceThread) throws {
        defer { http.connections.removeAll() }
        try http.loop.run(in: thread, self)
    }

    private func serve(_ connection: HTTPConnection, mask: UInt32) {
        guard connection.phase == .reading else { return http.serveAnswer(connection, mask: mask) }
        guard let head = http.readHead(connection, mask: mask) else { return }
        switch responder.answer(head) {
        case .now(let bytes): http.respond(connection, bytes)
        case .awaiting(let ticket, let render): http.await(connection, ticket, render: render)
        }
    }
}

@available(*, unavailable) extension StatusLoop: Sendable {}

/// What the event-loop skeleton hands the status endpoint: connections, the wake-up (the stop), socket events and
/// deadlines; before each sleep, the responder comes round.
extension StatusLoop: EventLoopHandler {
    package func accepted(
        _ socket: consuming FileDescriptor, peer: SocketAddress, via: ArrivalPath, on listening: Int32
    ) {
        guard let connection = http.register(socket, peer: peer) else { return }
        // The request usually comes with the connection: read and answered now, in the same wake-up, it cannot be
        // the oldest unfinished request of a busy address when later arrivals make room.
        serve(connection, mask: 0)
    }

    package func ready(_ fd: Int32, mask: UInt32) {
        guard let connection = http.connections[fd] else { return }
        serve(connection, mask: mask)
    }

    package func expired(_ fd: Int32, now: Double) {
        guard let connection = http.connections[fd] else { return }
        http.close(connection)
    }

    package func prepare(now: Double) -> Double? {
        responder.comeRound(now: now)
        return http.deliverReplies(now: now)
    }
}
