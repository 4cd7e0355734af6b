import RadioRelayMedia
import RadioRelaySystem

/// `moveclients`: a mount's raw and HTTP listeners (all, or one by `id=`, our addition) moved to another mount by the
/// network loops that serve them (`NetworkLoop+Move`), answered once every loop counted its own (`MoveTally`).
extension HTTPFrontLoop {
    func moveClients(
        _ call: AdminCall, _ connection: HTTPConnection, directory: PublicDirectory, roster: ListenerRoster?,
        broadcasters: [Broadcaster], view: IcecastAdmin.View,
        shape: @escaping (HTTPResponse) -> HTTPResponse = { $0 }
    ) {
        func answer(_ connection: HTTPConnection, _ response: HTTPResponse) {
            self.answer(connection, shape(response))
        }
        guard let mount = call.mount, let from = directory.mount(at: mount) else {
            return answer(connection, IcecastAdmin.failure(400, "Source does not exist", format: call.format))
        }
        // Icecast's answer without a destination: the mounts it could go to.
        guard let destination = call.destination else {
            return answer(connection, IcecastAdmin.listMounts(view, format: call.format))
        }
        guard let to = directory.mount(at: destination) else {
            return answer(connection, IcecastAdmin.failure(400, "No such destination", format: call.format))
        }
        guard from != to else {
            return answer(
                connection, IcecastAdmin.failure(400, "supplied mountpoints are identical", format: call.format))
        }
        guard directory.mounts[from].format == directory.mounts[to].format else {
            // Icecast says "moved" and moves nobody; a listener's player cannot change format mid-stream.
            return answer(
                connection,
                IcecastAdmin.failure(
                    400, "Destination is in another format (\(directory.mounts[to].format.contentType))",
                    format: call.format))
        }
        var id: ListenerID?
        if let given = call.id {
            let asked = if case .value(let value) = given { value } else { ListenerID(0) }
            guard let entry = roster?.entry(asked), entry.mount == mount else {
                return answer(connection, IcecastAdmin.notDone("Client \(asked) not found", format: call.format))
            }
            guard entry.kind != .events else {
                return answer(
                    connection,
                    IcecastAdmin.notDone(
                        "Client \(asked) not moved: title-event subscribers stay on their mount", format: call.format))
            }
            id = asked
        }
        let hlsOnly = id.flatMap { roster?.entry($0)?.kind } == .hls
        guard from < broadcasters.count, to < broadcasters.count else {
            return answer(connection, IcecastAdmin.failure(400, "Source does not exist", format: call.format))
        }
        let source = broadcasters[from]
        let target = broadcasters[to]
        let ticket = CommandTicket(.moveListeners(from: mount, to: destination, id: id))
        let tally = MoveTally(
            ticket: ticket, loops: hlsOnly ? 1 : source.pool.members.count, from: mount, to: destination, id: id)
        // HLS players here, at once; stream listeners by the loops that serve them.
        moveHLS(
            from: directory.mounts[from], to: directory.mounts[to], broadcasters: (source, target), id: id,
            tally: tally, now: monotonicNow())
        if hlsOnly {
            tally.loopDone()
        } else if !source.move(to: target, id: id, tally: tally) {
            return answer(connection, IcecastAdmin.failure(503, "Too many requests: try again", format: call.format))
        }
        let format = call.format
        Log.notice("admin: moving the listeners of \(mount)\(id.map { " (#\($0))" } ?? "") to \(destination)")
        http.await(connection, ticket) { outcome in
            switch outcome {
            case .done(let message):
                Log.notice("admin: \(message)")
                return shape(IcecastAdmin.success(message, format: format)).encoded
            case .refused(let message):
                return shape(IcecastAdmin.notDone(message, format: format)).encoded
            case nil:
                return shape(IcecastAdmin.failure(503, "The network loops did not answer in time", format: format))
                    .encoded
            }
        }
    }
}
