import RadioRelaySystem

/// One `moveclients` call's count, kept by the network loops that carry it out (each moves the listeners it serves)
/// and answered on its `ticket` once the last of them is done: how many moved, and why the others stayed.
package final class MoveTally: Sendable {
    package struct Count: Sendable, Equatable {
        package var moved = 0
        /// Listeners that stayed, by reason (a few distinct reasons at most).
        package var stayed: [String: Int] = [:]
        /// Loops still to report.
        package var loops: Int

        /// The answer's words: Icecast's for a whole mount, ours for one listener.
        package func outcome(from source: String, to destination: String, id: ListenerID?) -> CommandOutcome {
            let reasons = stayed.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: "; ")
            if let id {
                return moved > 0
                    ? .done("Client \(id) moved from \(source) to \(destination)")
                    : .refused(reasons.isEmpty ? "Client \(id) not found" : "Client \(id) not moved: \(reasons)")
            }
            let head = "Clients moved from \(source) to \(destination)"
            return .done(reasons.isEmpty ? head : "\(head) (\(moved) moved; stayed: \(reasons))")
        }
    }

    package let ticket: CommandTicket
    private let source: String
    private let destination: String
    private let id: ListenerID?
    private let count: LockedBox<Count>

    package init(ticket: CommandTicket, loops: Int, from source: String, to destination: String, id: ListenerID?) {
        self.ticket = ticket
        self.source = source
        self.destination = destination
        self.id = id
        count = LockedBox(Count(loops: max(1, loops)))
    }

    package func moved() { count.withLock { $0.moved += 1 } }

    package func stayed(_ reason: String) {
        count.withLock { count in
            // Reasons are this server's own words, a handful of them: bounded anyway.
            if count.stayed[reason] != nil || count.stayed.count < 16 { count.stayed[reason, default: 0] += 1 }
        }
    }

    /// One loop is done; the last one answers.
    package func loopDone() {
        let finished: Count? = count.withLock { count in
            count.loops -= 1
            return count.loops == 0 ? count : nil
        }
        if let finished { ticket.answer(finished.outcome(from: source, to: destination, id: id)) }
    }

    /// What was counted so far.
    package var snapshot: Count { count.snapshot }
}
