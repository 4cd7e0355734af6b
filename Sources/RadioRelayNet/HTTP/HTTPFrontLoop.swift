import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The loop behind an `HTTPFront`, confined to its thread, on the `EventLoop` skeleton. What it answers is
/// `PublicRouter`'s decision and what an event subscriber is sent is `EventStream`'s; this type carries out the
/// connections' lives (the shared part in `HTTPConnectionLoop`), hands stream requests to their stations, and keeps
/// event subscribers — each woken only when its mount's title changes or its keep-alive is due, so idle subscribers
/// cost nothing per wake-up.
package final class HTTPFrontLoop {
    /// The longest sleep, in milliseconds.
    private static let tick: Int32 = 250
    /// Seconds between looks at the stations' titles while anyone subscribes: titles reach subscribers within it.
    package static let titleCheckInterval = 0.25
    package static let acceptBatch = 128

    package let front: HTTPFront
    package let limits: HTTPFront.Limits
    /// Request heads, answers, deadlines and per-address caps, shared with the status endpoint.
    package let http: HTTPConnectionLoop
    /// Event subscribers counted by mount, by address and in all, for their limits.
    package var subscribers: EventSubscribers
    /// The subscribers' connections by mount path: a title change looks only at its mount's.
    package var eventConnections: [String: [Int32: HTTPConnection]] = [:]
    /// When each subscriber's keep-alive is due.
    package var keepAlives = DeadlineHeap<Int32>()
    /// The titles seen at the last look, by mount path, and when the next look is due.
    package var seenTitles: [String: String?] = [:]
    package var nextTitleCheck = -Double.infinity
    /// Wrong source credentials by address: 429 beyond the limit.
    package var lockout = SourceLockout()
    /// The HLS streams that hold sessions this loop began, and the output of each (its admission and access log):
    /// ended sessions are looked for here, a reload's old streams included, until they hold none.
    package var hlsStreams: [ObjectIdentifier: (stream: HLSStream, broadcaster: Broadcaster)] = [:]
    package var nextSessionSweep = -Double.infinity
    /// HLS players moved to another stream (`moveclients`), by the stream and key they reload their playlist with
    /// (`HTTPFrontLoop+HLSMove`); at most `HLSSessions.maxSessions`.
    var hlsMoves: [HLSMoveKey: MovedPlayer] = [:]
    /// Listeners of protected stations waiting for their verdict, by ticket (`HTTPFrontLoop+Auth`).
    var authWaits: [UInt64: AuthWait] = [:]
    /// A protected station's HLS players, by pass (`HTTPFrontLoop+HLS`).
    var hlsPasses: [String: HLSPass] = [:]
    /// The live pass of each first playlist request (a player reloading it gets its pass again), and the live
    /// passes by address.
    var hlsIdentities: [String: String] = [:]
    var passesByAddress: [HostKey: Int] = [:]
    var nextAuthTicket: UInt64 = 1
    /// The admin page's sessions and form tokens, and its forms whose body is still coming, by descriptor
    /// (`HTTPFrontLoop+AdminPage`).
    var adminSessions = AdminSessions()
    var formWaits: [Int32: AdminForm.Wait] = [:]

    package init(front: HTTPFront) throws(SystemError) {
        self.front = front
        limits = front.limits
        subscribers = EventSubscribers(perAddress: front.limits.maxSubscribersPerAddress)
        http = try HTTPConnectionLoop(
            label: "http", listenFD: front.service.listenSocket.rawValue, wakeFD: front.service.wakeEvent.rawValue,
            epollCapacity: 256,
            acceptBatch: Self.acceptBatch, tick: Self.tick, headerTimeout: front.limits.headerTimeout,
            maxRequestBytes: front.limits.maxRequestBytes, maxOpen: front.limits.maxPending,
            maxPendingPerAddress: front.limits.maxPendingPerAddress, keepAliveTimeout: front.limits.keepAliveTimeout,
            activity: front.activity)
        // A subscriber's counts and place go with its connection.
        http.onClose = { [unowned self] connection in
            if case .events(let mount) = connection.phase { unsubscribe(connection, from: mount) }
            formWaits[connection.fd] = nil
        }
        http.readPending = { [unowned self] connection in handleRequest(connection, mask: 0) }
        // With `http_proxy_protocol`, a connection's PROXY header names the client first (read for each
        // connection: a reload applies to the next one accepted).
        http.loop.arrivals = ProxyStage(
            capacity: front.limits.maxPending,
            expected: { [unowned front] _ in
                front.proxyProtocol.load(ordering: .relaxed)
                    ? ExpectedProxies(front.trustedProxies, setting: "http_proxy_from") : nil
            },
            refused: { [unowned front] _, _ in front.proxyRejected.add(1, ordering: .relaxed) })
    }

    /// Serves until `thread` is asked to stop. A failing `epoll_wait` is thrown: the loop cannot go on.
    package func run(in thread: ServiceThread) throws {
        defer {
            for connection in Array(http.connections.values) { http.close(connection) }
            endSessions(now: monotonicNow(), all: true)
            front.closeVerdicts()
            authWaits = [:]
        }
        try http.loop.run(in: thread, self)
    }

    func serve(_ connection: HTTPConnection, mask: UInt32) {
        switch connection.phase {
        case .reading: handleRequest(connection, mask: mask)
        case .writing, .draining: http.serveAnswer(connection, mask: mask)
        case .events:
            if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 {
                return http.close(connection)
            }
            if mask & EPOLLIN.rawValue != 0 {
                // A subscriber has nothing to say: what it sends is dropped, within the drain limit.
                guard let result = http.read(connection.fd, room: http.loop.scratch.count) else {
                    return http.close(connection)
                }
                if case .done(let count) = result {
                    connection.drained += count
                    if count == 0 || connection.drained > HTTPConnectionLoop.drainLimit {
                        return http.close(connection)
                    }
                }
            }
            if mask & EPOLLOUT.rawValue != 0 { flushEvents(connection) }
        }
    }

    /// Reads the request and acts once its head is decided.
    package func handleRequest(_ connection: HTTPConnection, mask: UInt32) {
        if formWaits[connection.fd] != nil { return readForm(connection, mask: mask) }
        guard let head = http.readHead(connection, mask: mask) else { return }
        if case .request(let request) = head { findClient(connection, request) }
        let (directory, broadcasters) = front.directory()
        switch PublicRouter.route(head, directory: directory, host: front.address.description) {
        case .respond(let response):
            send(response, on: connection)
        case .source(let request):
            handleSourceProtocol(connection, request)
        case .admin(let request):
            handleAdmin(connection, request, directory: directory, broadcasters: broadcasters)
        case .archive(let station, let name, let request):
            answerArchive(connection, request, station: station, name: name, directory: directory)
        case .hls(let mount, let response, let request):
            let raw: HTTPRequestHead.Request? = if case .request(let raw) = head { raw } else { nil }
            answerHLS(
                connection, response, request: request, mount: directory.mounts[mount],
                broadcaster: broadcasters[mount], raw: raw)
        case .stream(let mount, let responseHead, let request):
            if case .request(let raw) = head,
                authenticates(
                    connection, raw, mount: directory.mounts[mount], broadcaster: broadcasters[mount],
                    head: responseHead, request: request)
            {
                return
            }
            handOver(
                connection, to: broadcasters[mount], mount: directory.mounts[mount], head: responseHead,
                request: request)
        case .events(let mount, let responseHead, let request):
            subscribe(
                connection, to: directory.mounts[mount], broadcaster: broadcasters[mount], head: responseHead,
                request: request)
        case .pageEvents(let responseHead, let request):
            // Every station's titles as one stream, counted and limited as a subscription of the first station's.
            let page = PublicDirectory.Mount(
                path: IndexPage.eventsPath, eventsPath: IndexPage.eventsPath, station: "",
                title: IndexPage.titles(directory))
            subscribe(connection, to: page, broadcaster: broadcasters[0], head: responseHead, request: request)
        }
    }

    /// Behind a reverse proxy in HTTP mode (`forwarded_from`), the request's client is the one its header names
    /// (`ForwardedFor`): everything after — the access lists, the per-address limits, the listener list, the logs —
    /// sees that address. The proxy's own address is kept for the connection's next request.
    private func findClient(_ connection: HTTPConnection, _ request: HTTPRequestHead.Request) {
        let via = connection.forwarder ?? connection.peer
        guard let forwarding = front.forwarding, forwarding.proxies.trusts(via) else {
            // Not (or no longer, after a reload) a trusted proxy: the connection's own peer again.
            if let forwarder = connection.forwarder { connection.peer = forwarder }
            connection.forwarder = nil
            return
        }
        connection.forwarder = via
        let name = forwarding.header.rawValue
        connection.peer = forwarding.client(
            peer: via, lines: request.fields.filter { $0.name == name }.map(\.value))
    }

    /// Sends an answer; the connection is kept for another request when the answer allows it, but not after a
    /// pipelined request (its bytes are gone), nor past the most answers.
    package func send(_ response: HTTPResponse, on connection: HTTPConnection) {
        let keep =
            response.keepAlive && !connection.pipelined
            && connection.answered + 1 < HTTPConnectionLoop.maxAnswersPerConnection
        var answer = response
        answer.keepAlive = keep
        http.respond(connection, head: answer.encodedHead, body: answer.payload, keepAlive: keep)
    }

    /// Gives a stream request's socket to the mount's station; it answers and streams from its own loop.
    func handOver(
        _ connection: HTTPConnection, to broadcaster: Broadcaster, mount: PublicDirectory.Mount, head: [UInt8],
        request: ListenerRequest, session: ListenerSession? = nil
    ) {
        do {
            try http.loop.epoll.remove(connection.fd)
        } catch {
            Log.warning("http: \(connection.peer): \(error)")
            return http.close(connection)
        }
        http.close(connection)  // forgotten here; the socket leaves with the arrival
        guard let socket = connection.takeSocket() else { return }
        let arrival = ArrivingListener(
            socket: socket, peer: connection.peer, responseHead: head, request: request, session: session,
            refusal: { PublicRouter.notAdmitted($0).encoded })
        if let start = request.timeShift {
            return handOverTimeShifted(arrival, to: broadcaster, from: start, peer: connection.peer, mount: mount)
        }
        if !broadcaster.handOver(arrival) {
            // The station's loop is far behind or stopped: the arrival (and its socket) is dropped here, after a
            // best-effort 503 on the socket it still owns.
            if let socket = arrival.takeSocket() {
                sendBestEffort(PublicRouter.text(503, "station busy\n").encoded, on: socket.rawValue)
            }
            http.logLimited(.refused, now: monotonicNow(), "http: \(connection.peer) refused: \(mount.path) is busy")
        }
    }

}
