import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// Answers that wait for a station's reply (`CommandTicket`): the connection is held — not read, its deadline the
/// reply's plus the answer's time — and looked at each time the loop comes round (every `replyPoll` seconds while
/// any waits); the answer is `render(outcome)`, or `render(nil)` once `replyTimeout` passed without one. The loop
/// never blocks on a station.
extension HTTPConnectionLoop {
    /// Seconds a reply is waited for.
    package static let replyTimeout = 2.0
    /// Seconds between looks while a reply is awaited.
    package static let replyPoll = 0.02

    /// Holds `connection` until `ticket` is answered or `replyTimeout` passed, then sends `render`'s bytes as its one
    /// answer.
    package func await(
        _ connection: HTTPConnection, _ ticket: CommandTicket, render: @escaping (CommandOutcome?) -> [UInt8]
    ) {
        let now = monotonicNow()
        guard park(connection, until: now + Self.replyTimeout + headerTimeout) else { return }
        awaiting[connection.fd] = AwaitedReply(
            connection: connection, ticket: ticket, render: render, deadline: now + Self.replyTimeout)
    }

    /// Holds a connection whose answer waits for another thread (a station's reply, an authentication backend's
    /// verdict): not read, not pending, its socket watched for errors only, closed at `deadline`. False when it could
    /// not be (it is closed).
    package func park(_ connection: HTTPConnection, until deadline: Double) -> Bool {
        endPending(connection)
        connection.phase = .writing  // nothing to write yet
        connection.output = []
        connection.body = []
        connection.sent = 0
        do {
            try loop.epoll.modify(connection.fd, events: 0, tag: UInt64(connection.fd))
        } catch {
            close(connection)
            return false
        }
        connection.waitsForOutput = false
        setDeadline(connection, deadline)
        return true
    }

    /// A parked connection is watched for its request's answer again; false when it could not be (it is closed).
    package func unpark(_ connection: HTTPConnection) -> Bool {
        do {
            try loop.epoll.modify(
                connection.fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, tag: UInt64(connection.fd))
            return true
        } catch {
            close(connection)
            return false
        }
    }

    /// Sends the answers whose reply came (or whose wait is over); when to look again (nil: nothing waits).
    package func deliverReplies(now: Double) -> Double? {
        guard !awaiting.isEmpty else { return nil }
        for (fd, awaited) in awaiting {
            let outcome = awaited.ticket.outcome
            guard outcome != nil || now >= awaited.deadline else { continue }
            awaiting[fd] = nil
            guard connections[fd] === awaited.connection, unpark(awaited.connection) else { continue }
            respond(awaited.connection, awaited.render(outcome))
        }
        return awaiting.isEmpty ? nil : now + Self.replyPoll
    }
}

/// A connection held for a station's reply.
package struct AwaitedReply {
    let connection: HTTPConnection
    let ticket: CommandTicket
    let render: (CommandOutcome?) -> [UInt8]
    let deadline: Double
}
