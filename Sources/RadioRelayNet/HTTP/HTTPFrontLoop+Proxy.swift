import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// What the event-loop skeleton hands the public HTTP front end: connections (with `http_proxy_protocol`, once their
/// PROXY header named the client — a LOCAL header, the balancer's own connection, leaves the peer as it is and its
/// request is answered like any other), the wake-up (the stop), socket events, deadlines of the timed phases, and
/// the event subscribers' titles and keep-alives.
extension HTTPFrontLoop: EventLoopHandler {
    package func accepted(
        _ socket: consuming FileDescriptor, peer: SocketAddress, via: ArrivalPath, on listening: Int32
    ) {
        // Counted against the client's address (the header's source behind a balancer) while it sends its head.
        guard let connection = http.register(socket, peer: peer) else { return }
        // The request often arrives with the connection: read it now rather than after another wake-up.
        handleRequest(connection, mask: 0)
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
        settleAuthentications()
        if now >= nextSessionSweep {
            nextSessionSweep = now + 1
            endSessions(now: now)
        }
        let reply = http.deliverReplies(now: now)
        guard !subscribers.isEmpty else { return reply }
        sendEvents(now: now)
        let events = min(nextTitleCheck, keepAlives.first()?.deadline ?? nextTitleCheck)
        return reply.map { min($0, events) } ?? events
    }
}
