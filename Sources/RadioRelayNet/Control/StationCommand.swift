import RadioRelaySystem

/// What an operator (or a source, through Icecast's admin calls) can ask of a running station: one type, carried on
/// the station's one `CommandQueue` to the thread that owns what it changes, and answered there (`CommandOutcome`).
/// Listener commands (kick, move by `ListenerID`) take their place here beside these, answered by the network loop
/// that holds the listener.
package enum StationCommand: Sendable, Equatable, CustomStringConvertible {
    /// Play this input until released or until it fails.
    case force(input: String)
    /// Release the force: the rules choose the input again.
    case release
    /// End the live source on the air (Icecast's `killsource`): the station hands back.
    case killSource
    /// Move a mount's listeners (all, or one) to another mount (Icecast's `moveclients`): carried out by the network
    /// loops that serve them (`MoveTally`), never by a station's pipeline.
    case moveListeners(from: String, to: String, id: ListenerID?)

    package var description: String {
        switch self {
        case .force(let input): "force \(Sanitized.text(input, limit: 64))"
        case .release: "release"
        case .killSource: "killsource"
        case .moveListeners(let from, let to, let id):
            "moveclients \(Sanitized.text(from, limit: 64)) → \(Sanitized.text(to, limit: 64))"
                + (id.map { " #\($0)" } ?? "")
        }
    }
}

/// A command's answer, in words for the operator.
package enum CommandOutcome: Sendable, Equatable {
    case done(String)
    /// It could not be done now (no live source is on the air …).
    case refused(String)
}

/// One command on its way, and the answer its caller waits for: answered once (the first answer stands), read by
/// the caller's loop when it comes round (`HTTPConnectionLoop.deliverReplies`) — a loop never blocks on it.
package final class CommandTicket: Sendable {
    package let command: StationCommand
    private let slot = LockedBox<CommandOutcome?>(nil)

    package init(_ command: StationCommand) { self.command = command }

    /// The answer; a later one is ignored.
    package func answer(_ outcome: CommandOutcome) {
        slot.withLock { if $0 == nil { $0 = outcome } }
    }

    package var outcome: CommandOutcome? { slot.snapshot }
}

/// A station's commands waiting for its pipeline: bounded (`capacity`; more are refused at once), taken in order
/// each iteration. A station that stops answers what is left (`refuseAll`), so no caller waits past its deadline
/// for a station that is gone.
package final class CommandQueue: Sendable {
    package static let capacity = 16
    private let waiting = LockedBox<[CommandTicket]>([])

    package init() {}

    /// Queues `command`; nil when `capacity` wait already.
    package func submit(_ command: StationCommand) -> CommandTicket? {
        let ticket = CommandTicket(command)
        let taken = waiting.withLock { queue in
            guard queue.count < Self.capacity else { return false }
            queue.append(ticket)
            return true
        }
        return taken ? ticket : nil
    }

    /// The commands since the last call, in order.
    package func take() -> [CommandTicket] {
        waiting.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
    }

    /// Answers every waiting command with `reason` (the station stops).
    package func refuseAll(_ reason: String) {
        for ticket in take() { ticket.answer(.refused(reason)) }
    }
}
