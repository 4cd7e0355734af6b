import RadioRelayMedia
import RadioRelaySystem

/// The answers of Icecast 2.4's admin calls, as pure functions of a `View` (the directory, the listener roster, the
/// server's totals and the time): `stats` (the `icestats` document), `listmounts`, `listclients`, and the
/// `iceresponse` of the calls that act. Icecast's element names, order and text — libxml2's output, no indentation —
/// and with `format=json` (our addition) the same fields as JSON. Where the relay has more than Icecast (the
/// listener's kind: raw TCP, HTTP, HLS, events), it adds elements Icecast's readers ignore; it never renames one.
package enum IcecastAdmin {
    /// Listeners listed at most in one answer (the roster's oldest first): an answer's size is bounded.
    package static let maxListed = 100_000

    /// What the answers are made from.
    package struct View: Sendable {
        package var directory: PublicDirectory
        /// The roster's listeners, the oldest first.
        package var listeners: [ListenerEntry]
        /// The request's host (`Host`, else the address listened on), for `host` and `listenurl`.
        package var host: String
        /// Monotonic seconds (the listeners' `connectedAt` clock) and the wall clock.
        package var now: Double
        package var wallClock: Double
        /// Listener connections ever accepted, across the outputs (Icecast's `listener_connections`).
        package var listenerConnections = 0
        /// Live sources connected now.
        package var sourcesLive = 0

        package init(
            directory: PublicDirectory, listeners: [ListenerEntry], host: String, now: Double, wallClock: Double
        ) {
            self.directory = directory
            // Icecast lists its sources by mount.
            self.directory.mounts.sort { $0.path < $1.path }
            self.listeners = listeners
            self.host = host
            self.now = now
            self.wallClock = wallClock
        }

        /// The listeners of `mount` (stream listeners and HLS players: not title-event subscribers, which Icecast
        /// does not have).
        func listeners(of mount: String) -> [ListenerEntry] {
            listeners.filter { $0.mount == mount && $0.kind != .events }
        }
    }

    static let declaration = "<?xml version=\"1.0\"?>\n"

    // MARK: Reading calls

    /// `/admin/stats`: the server's fields, then a `source` per mount.
    package static func stats(_ view: View, request: HTTPRequestHead.Request, format: AdminCall.Format)
        -> HTTPResponse
    {
        let listeners = view.directory.mounts.reduce(0) { $0 &+ $1.listeners }
        let global: [IcecastField] = [
            IcecastField("admin", IcecastStatus.admin),
            IcecastField("client_connections", view.listenerConnections),
            IcecastField("clients", listeners &+ view.sourcesLive),
            IcecastField("connections", view.listenerConnections),
            IcecastField("file_connections", 0),
            IcecastField("host", IcecastStatus.hostName(view.host)),
            IcecastField("listener_connections", view.listenerConnections),
            IcecastField("listeners", listeners),
            IcecastField("location", IcecastStatus.location),
            IcecastField("server_id", "radio-relay \(RadioRelayVersion.string)"),
            IcecastField("server_start", IcecastStatus.rfc822(view.directory.serverStart)),
            IcecastField("server_start_iso8601", IcecastStatus.iso8601(view.directory.serverStart)),
            IcecastField("source_client_connections", view.sourcesLive),
            IcecastField("source_relay_connections", 0),
            IcecastField("source_total_connections", view.sourcesLive),
            IcecastField("sources", view.directory.mounts.count),
            IcecastField("stats", 0),
            IcecastField("stats_connections", 0),
        ]
        let base = Playlists.base(request, directory: view.directory, fallbackHost: view.host)
        let sources = view.directory.mounts.map { mount in (mount.path, sourceFields(mount, base: base)) }
        return document(global, sources: sources, format: format)
    }

    /// A mount's `source` in `stats`: `/status-json.xsl`'s fields and those Icecast adds for its admin, by name.
    static func sourceFields(_ mount: PublicDirectory.Mount, base: String) -> [IcecastField] {
        let figures = mount.admin
        var fields =
            IcecastStatus.sourceFields(mount, base: base) + [
                figures.maxListeners > 0
                    ? IcecastField("max_listeners", figures.maxListeners) : IcecastField("max_listeners", "unlimited"),
                IcecastField("public", 0),
                IcecastField("slow_listeners", figures.slowListeners),
                IcecastField("total_bytes_read", figures.bytesRead),
                IcecastField("total_bytes_sent", figures.bytesSent),
            ]
        if let address = figures.sourceAddress { fields.append(IcecastField("source_ip", address)) }
        if let agent = figures.sourceAgent { fields.append(IcecastField("user_agent", agent)) }
        return fields.sorted { $0.name < $1.name }
    }

    /// `/admin/listmounts`: each mount, its listeners, how long its live source has been connected, its type.
    package static func listMounts(_ view: View, format: AdminCall.Format) -> HTTPResponse {
        let sources = view.directory.mounts.map { mount in
            var fields = [IcecastField("fallback", ""), IcecastField("listeners", mount.listeners)]
            if let connected = mount.sourceConnected {
                fields.append(IcecastField("Connected", seconds(view.wallClock - connected)))
            }
            fields.append(IcecastField("content-type", mount.format.contentType))
            return (mount.path, fields)
        }
        return document([], sources: sources, format: format)
    }

    /// `/admin/listclients?mount=`: the mount's `Listeners` count, then each listener.
    package static func listClients(_ view: View, _ call: AdminCall, format: AdminCall.Format) -> HTTPResponse {
        guard let path = call.mount, let index = view.directory.mount(at: path) else {
            return failure(400, "Source does not exist", format: format)
        }
        let mount = view.directory.mounts[index]
        var fields = [IcecastField("Listeners", mount.listeners)]
        var listeners: [[IcecastField]] = []
        for entry in view.listeners(of: path) {
            var listener = [
                IcecastField("IP", entry.address),
                IcecastField("UserAgent", entry.userAgent ?? "Unknown"),
                IcecastField("Connected", seconds(view.now - entry.connectedAt)),
                IcecastField("ID", String(entry.id.value)),
            ]
            if let user = entry.username { listener.append(IcecastField("username", user)) }
            listener.append(IcecastField("Protocol", entry.kind.rawValue))
            listeners.append(listener)
        }
        switch format {
        case .xml:
            let items = listeners.map { "<listener>" + IcecastField.xml($0) + "</listener>" }.joined()
            return xml(
                "<icestats><source mount=\"\(Markup.escape(path))\">" + IcecastField.xml(fields) + items
                    + "</source></icestats>")
        case .json:
            fields.insert(IcecastField("mount", path), at: 0)
            let source = JSONText.object(
                fields.map { ($0.name, $0.jsonValue) } + [
                    ("listener", JSONText.array(listeners.map(IcecastField.json)))
                ])
            return json(JSONText.object([("icestats", JSONText.object([("source", source)]))]))
        }
    }

    // MARK: Answers

    /// Icecast's `iceresponse` of a call that succeeded (`return` 1).
    package static func success(_ message: String, format: AdminCall.Format) -> HTTPResponse {
        response(200, message, done: true, format: format)
    }

    /// Icecast's `iceresponse` of a call that was understood and did nothing (`return` 0, status 200): "Client N not
    /// found", "No such action".
    package static func notDone(_ message: String, format: AdminCall.Format) -> HTTPResponse {
        response(200, message, done: false, format: format)
    }

    /// A refused call as Icecast answers it: its error page (`400 - Source does not exist`), in HTML as Icecast's
    /// is; with `format=json`, an `iceresponse` with the same status and message.
    package static func failure(_ status: Int, _ message: String, format: AdminCall.Format) -> HTTPResponse {
        if format == .json { return response(status, message, done: false, format: .json) }
        let text = "\(status) - \(Markup.escape(message))"
        var answer = HTTPResponse(
            status: status, contentType: "text/html; charset=utf-8",
            bytes: Array("<html><head><title>Error \(status)</title></head><body><b>\(text)</b></body></html>\n".utf8),
            headers: [("Cache-Control", "no-cache, no-store")])
        answer.summary = message
        return answer
    }

    /// 401 with Icecast's challenge and text.
    package static func unauthorized() -> HTTPResponse {
        HTTPResponse(
            status: 401, contentType: "text/plain; charset=utf-8", bytes: Array("You need to authenticate\n".utf8),
            headers: [("WWW-Authenticate", "Basic realm=\"Icecast2 Server\""), ("Cache-Control", "no-cache, no-store")])
    }

    private static func response(_ status: Int, _ message: String, done: Bool, format: AdminCall.Format)
        -> HTTPResponse
    {
        let fields = [IcecastField("message", message), IcecastField("return", done ? 1 : 0)]
        var answer =
            switch format {
            case .xml: xml("<iceresponse>" + IcecastField.xml(fields) + "</iceresponse>", status: status)
            case .json: json(JSONText.object([("iceresponse", IcecastField.json(fields))]), status: status)
            }
        answer.summary = message
        return answer
    }

    /// An `icestats` document: the server's `fields` (none for `listmounts`), then a `source` per mount — in JSON
    /// an array even of one, so a tool reads one shape.
    private static func document(
        _ fields: [IcecastField], sources: [(String, [IcecastField])], format: AdminCall.Format
    ) -> HTTPResponse {
        switch format {
        case .xml:
            let body = sources.map {
                "<source mount=\"\(Markup.escape($0.0))\">" + IcecastField.xml($0.1) + "</source>"
            }
            let content = IcecastField.xml(fields) + body.joined()
            // libxml2 writes an empty element as `<icestats/>`.
            return xml(content.isEmpty ? "<icestats/>" : "<icestats>" + content + "</icestats>")
        case .json:
            let body = sources.map { IcecastField.json([IcecastField("mount", $0.0)] + $0.1) }
            let members = fields.map { ($0.name, $0.jsonValue) } + [("source", JSONText.array(body))]
            return json(JSONText.object([("icestats", JSONText.object(members))]))
        }
    }

    /// Whole seconds, as Icecast counts `Connected`: 0 for a negative or non-finite span.
    private static func seconds(_ span: Double) -> Int { max(0, Int(exactly: span.rounded(.down)) ?? 0) }

    private static func xml(_ root: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: "text/xml; charset=utf-8", bytes: Array((declaration + root + "\n").utf8),
            headers: [("Cache-Control", "no-cache, no-store")])
    }

    private static func json(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: "application/json; charset=utf-8", bytes: Array(text.utf8),
            headers: [("Cache-Control", "no-cache, no-store")])
    }
}
