import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Broadcaster: published pages → bytes on every listener's socket, over raw TCP.
///
/// One network thread runs an epoll loop over the listening socket, an eventfd that the pipeline signals after each
/// publish, another that the HTTP front end signals when it hands listeners over, and the listeners' non-blocking
/// sockets. Pages are never copied per listener: each listener is a cursor
/// into the shared `PageRing`, and one `sendmsg` sends several pages straight from the ring. A listener is written
/// at most every `flushInterval` (listeners' phases differ, so the writes spread over time), and `EPOLLOUT` is armed
/// only while its socket is backed up, so no listener can block or slow another.
package final class Broadcaster: Sendable {
    /// The settings in force: replaced as a whole by `update` (a reload), read by the network loop when
    /// `settingsVersion` moves.
    private let settings: LockedBox<BroadcasterConfiguration>
    package let settingsVersion = Atomic<Int>(0)
    package var configuration: BroadcasterConfiguration { settings.snapshot }
    package let counters = BroadcasterCounters()
    package let ring: PageRing
    /// Where it listens (the port is the real one when 0 was asked for).
    package let address: SocketAddress
    package let name: String
    /// The listening socket (bound here, or adopted from systemd) and the eventfds that wake the loop — pages
    /// published, listeners arrived (a reload's new settings and the stop come through the second) — owned here,
    /// each closed once when the Broadcaster goes, whatever failed on the way.
    package let listenSocket: FileDescriptor
    package let publishedEvent: EventFD
    package let arrivedEvent: EventFD
    /// The places for listeners shared by all stations (capped by `ResourceLimits.apply` at start-up).
    package let budget: ListenerBudget
    /// HTTP listeners handed over by the front end, waiting for the loop (`handOver`, bounded).
    package let arrivals = LockedBox<[ArrivingListener]>([])
    /// The network thread, while it runs.
    private let thread = LoopThread()
    private let onUnexpectedExit: @Sendable (String, (any Error)?) -> Void

    /// Binds and listens now, so that a taken port fails here; `start()` begins serving.
    /// - Parameter adoptedSocket: an already listening socket (systemd socket activation) instead of binding; the
    ///   Broadcaster owns it from here on, and closes it even when this initializer throws.
    /// - Parameter onUnexpectedExit: what happens when the network thread ends by itself (default: the process
    ///   exits with EX_SOFTWARE; tests observe it instead).
    /// - Parameter budget: the listener places it shares with other stations (default: the process's).
    package convenience init(
        name: String, configuration: BroadcasterConfiguration, ring: PageRing,
        adoptedSocket: Int32? = nil
    ) throws {
        try self.init(
            name: name, configuration: configuration, ring: ring, adoptedSocket: adoptedSocket,
            onUnexpectedExit: ServiceThread.terminateProcess)
    }

    package init(
        name: String, configuration: BroadcasterConfiguration, ring: PageRing, adoptedSocket: Int32? = nil,
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void, budget: ListenerBudget = .shared
    ) throws {
        self.onUnexpectedExit = onUnexpectedExit
        self.budget = budget
        let socket: FileDescriptor
        if let adoptedSocket {
            guard adoptedSocket >= 0 else { throw SystemError("adopting socket \(adoptedSocket)", errno: EBADF) }
            socket = FileDescriptor(owning: adoptedSocket)
            try configuration.validate()
            try setNonblocking(socket.rawValue)
        } else {
            try configuration.validate()
            socket = try Self.listen(configuration)
        }
        let local = try SocketAddress.local(of: socket.rawValue)
        self.name = name
        self.settings = LockedBox(configuration)
        self.ring = ring
        address = local
        publishedEvent = try EventFD()
        arrivedEvent = try EventFD()
        listenSocket = socket
    }

    /// Applies new limits, lag, burst and flush settings to the running loop (its listeners stay connected). The
    /// listening address cannot change this way: a station bound elsewhere is a new station.
    package func update(_ configuration: BroadcasterConfiguration) throws {
        try configuration.validate()
        settings.withLock { $0 = configuration }
        settingsVersion.add(1, ordering: .releasing)
        signal(arrivedEvent, "new settings")
    }

    private static func listen(_ configuration: BroadcasterConfiguration) throws -> FileDescriptor {
        guard let address = SocketAddress(host: configuration.bind, port: UInt16(configuration.port)) else {
            throw ConfigurationError("bind address \(configuration.bind) is not an IPv4 or IPv6 address")
        }
        // A large backlog: a crowd reconnecting at once must not wait on SYN retries (Icecast's backlog is 5).
        return try listeningSocket(on: address, backlog: 4096, purpose: "")
    }

    deinit { Log.debug("\(name): broadcaster released (listening descriptor \(listenSocket.rawValue) closes)") }

    /// Starts the network thread.
    package func start() throws {
        let started = ServiceThread(name: "net-\(name)", onUnexpectedExit: onUnexpectedExit) { [self] thread in
            let loop = try NetworkLoop(broadcaster: self)
            try loop.run(in: thread)
        }
        try thread.start(started)
    }

    /// Heartbeat of the network thread (for the watchdog); empty before `start`.
    package var heartbeats: [Int] {
        thread.heartbeats
    }

    /// Wakes the loop for pages published, or (`arrivedEvent`) for listeners handed over or new settings.
    package func signal(_ event: borrowing EventFD, _ what: String) {
        do {
            try event.signal()
        } catch {
            Log.warning("\(name): cannot wake the network loop for \(what): \(error)")
        }
    }

    /// Publishes pages and wakes the loop once for all of them (from the pipeline thread).
    package func publish(_ pages: [OggPage]) {
        guard !pages.isEmpty else { return }
        ring.publish(pages)
        counters.pagesPublished.add(pages.count, ordering: .relaxed)
        signal(publishedEvent, "pages")
    }

    /// Stops the loop, which closes every listener; returns when the thread is joined (false: it outlived
    /// `timeout` seconds).
    @discardableResult
    package func stop(timeout: Double = 10) -> Bool {
        thread.stop(timeout: timeout, waking: arrivedEvent, label: name)
    }
}
