import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Broadcaster: published pages → bytes on every listener's socket, over raw TCP.
///
/// The loops of a `NetworkPool` serve its listeners (its server's pool, shared by every output; without one, a pool
/// of its own with one loop): one of them accepts on its listening socket, and every listener, raw or handed
/// over by the HTTP front end, goes to the loop with the fewest. Pages are never copied per listener: each listener
/// is a cursor into the shared `PageRing`, and one `sendmsg` sends several pages straight from the ring. A listener
/// is written at most every flush interval (listeners' phases differ, so the writes spread over time), and
/// `EPOLLOUT` is armed only while its socket is backed up, so no listener can block or slow another.
package final class Broadcaster: Sendable {
    /// The settings in force: replaced as a whole by `update` (a reload), read by the network loop when
    /// `settingsVersion` moves.
    private let settings: LockedBox<BroadcasterConfiguration>
    package let settingsVersion = Atomic<Int>(0)
    package var configuration: BroadcasterConfiguration { settings.snapshot }
    package let counters = BroadcasterCounters()
    package let ring: PageRing
    /// Where it listens (the port is the real one when 0 was asked for); with no raw port (`port = none`), its bind
    /// address and port 0.
    package let address: SocketAddress
    /// Its raw TCP port as logs and status show it: `ADDRESS:PORT`, or `none` (HTTP only).
    package var shownAddress: String { listenFD == nil ? "none" : address.description }

    /// The station and mount as the roster entries of its listeners of `kind` share them.
    package func listenerMount(_ kind: ListenerProtocol) -> ListenerMount {
        switch kind {
        case .tcp: listenerMounts.tcp
        case .http: listenerMounts.http
        case .hls, .events: listenerMounts.tcp.of(kind)
        }
    }
    package let name: String
    /// The listening socket (bound here, or adopted from systemd), owned here, closed once when the Broadcaster
    /// goes, whatever failed on the way; nil with no raw port (`port = none`).
    private let listenSocket: FileDescriptor?
    /// Its descriptor (nil: no raw port).
    package let listenFD: Int32?
    /// The places for listeners shared by all its server's outputs (capped by `ResourceLimits.apply` at start-up).
    package let budget: ListenerBudget
    /// Its station's listeners on every output — raw, HTTP and HLS sessions together — within `max_listeners`.
    package let audience: StationAudience
    /// Where its loops write a line per listener that leaves; nil: nowhere.
    package let accessLog: AccessLog?
    /// Who is admitted, and the roster of those who were (its server's: shared by every output and the front end).
    package let admission: ListenerAdmission
    /// The station it belongs to and the HTTP mount it serves (`/jazz.opus`): what admission, the access log and
    /// the listener list name for its listeners, raw ones too.
    package let station: String
    package let mount: String
    /// The two as its raw and HTTP listeners' roster entries share them (`listenerMount(_:)`).
    private let listenerMounts: (tcp: ListenerMount, http: ListenerMount)
    /// The loops that serve it, and whether they are its own (started and stopped with it).
    package let pool: NetworkPool
    private let ownsPool: Bool
    /// Publications so far: a loop's view of the ring is refreshed only when this moved.
    package let publications = Atomic<Int>(0)
    /// Listeners by address (`maxPerIP`), across the pool's loops.
    private let hosts = LockedBox<[HostKey: Int]>([:])
    /// Peaks, session lengths and listening seconds (the loops note joins and leaves; status reads them).
    package let statistics = LockedBox(ListenerStatistics())
    /// An MP3 pass-through output's ICY metadata block for the newest title, which its listeners that asked for
    /// titles (`Icy-MetaData: 1`) get once after the next `icy-metaint` bytes; nil before the first title.
    package let icyBlock = LockedBox<SharedPage?>(nil)
    /// Its time-shifted listeners' service, while its station keeps an archive of it (`TimeShiftService`).
    package let timeShift = LockedBox<TimeShiftService?>(nil)

    /// Binds and listens now, so that a taken port fails here; `start()` begins serving.
    /// - Parameter adoptedSocket: an already listening socket (systemd socket activation) instead of binding; the
    ///   Broadcaster owns it from here on, and closes it even when this initializer throws.
    /// - Parameter onUnexpectedExit: what happens when the network thread ends by itself (default: the process
    ///   exits with EX_SOFTWARE; tests observe it instead).
    package convenience init(
        name: String, configuration: BroadcasterConfiguration, ring: PageRing,
        adoptedSocket: Int32? = nil
    ) throws {
        try self.init(
            name: name, configuration: configuration, ring: ring, adoptedSocket: adoptedSocket,
            onUnexpectedExit: ServiceThread.terminateProcess)
    }

    /// - Parameter services: its server's loops, listener places and access log (default: a pool of its own with
    ///   one loop, named after it, no limit but its own, no access log).
    package init(
        name: String, configuration: BroadcasterConfiguration, ring: PageRing, adoptedSocket: Int32? = nil,
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void,
        services: ListenerServices = ListenerServices(), station: String? = nil, mount: String? = nil
    ) throws {
        self.budget = services.budget
        audience = services.audience ?? StationAudience(limit: configuration.maxListeners)
        self.accessLog = services.accessLog
        admission = services.admission
        self.station = station ?? name
        self.mount = mount ?? "/\(name)"
        listenerMounts = (
            ListenerMount(station: self.station, mount: self.mount, kind: .tcp),
            ListenerMount(station: self.station, mount: self.mount, kind: .http)
        )
        // An adopted socket is owned from here on, closed even when the configuration is refused.
        let adopted = adoptedSocket.map { FileDescriptor(owning: $0) }
        try configuration.validate()
        self.name = name
        self.settings = LockedBox(configuration)
        self.ring = ring
        if configuration.rawListeners {
            let socket = try listeningSocket(
                adopting: adopted?.release(), orBinding: try Self.address(configuration), backlog: 4096, purpose: "")
            address = try SocketAddress.local(of: socket.rawValue)
            inheritedOptions = LockedBox(Self.applyListenerOptions(configuration, to: socket.rawValue, name: name))
            listenFD = socket.rawValue
            listenSocket = .some(consume socket)
        } else {
            var none = configuration
            none.port = 0
            address = try Self.address(none)
            inheritedOptions = LockedBox(nil)
            listenFD = nil
            listenSocket = nil
        }
        if let shared = services.pool {
            self.pool = shared
            ownsPool = false
        } else {
            self.pool = try NetworkPool(threads: 1, label: "net-\(name)", onUnexpectedExit: onUnexpectedExit)
            ownsPool = true
        }
    }

    /// Applies new limits, lag, burst and flush settings to the running loop (its listeners stay connected). The
    /// listening address cannot change this way: a station bound elsewhere is a new station.
    package func update(_ configuration: BroadcasterConfiguration) throws {
        try configuration.validate()
        if let listenFD, configuration.listenerSocketOptions != inheritedOptions.snapshot {
            let applied = Self.applyListenerOptions(configuration, to: listenFD, name: name)
            inheritedOptions.withLock { $0 = applied }
        }
        settings.withLock { $0 = configuration }
        settingsVersion.add(1, ordering: .releasing)
        pool.settingsChanged(for: self)
    }

    /// The listener socket options its listening socket carries, which the connections accepted on it inherit; nil
    /// when setting them failed (each connection then gets them one by one).
    private let inheritedOptions: LockedBox<ListenerSocketOptions?>

    /// Whether a connection accepted on its listening socket already has `options` (the loop's settings).
    package func acceptedConnectionsHave(_ options: ListenerSocketOptions) -> Bool {
        inheritedOptions.snapshot == options
    }

    /// Sets the listener socket options on the listening socket; nil (and one warning) when the kernel refuses one.
    private static func applyListenerOptions(
        _ configuration: BroadcasterConfiguration, to fd: Int32, name: String
    ) -> ListenerSocketOptions? {
        let options = configuration.listenerSocketOptions
        do {
            try options.apply(to: fd)
            return options
        } catch {
            Log.warning("\(name): listening socket: \(error); each listener's connection gets its options instead")
            return nil
        }
    }

    /// Where it binds (a large backlog, 4096: a crowd reconnecting at once must not wait on SYN retries; Icecast's
    /// backlog is 5).
    private static func address(_ configuration: BroadcasterConfiguration) throws -> SocketAddress {
        guard let address = SocketAddress(host: configuration.bind, port: UInt16(configuration.port)) else {
            throw ConfigurationError("bind address \(configuration.bind) is not an IPv4 or IPv6 address")
        }
        return address
    }

    deinit {
        Log.debug("\(name): broadcaster released (listening descriptor \(listenFD ?? -1) closes)")
    }

    /// Closes its raw or HTTP listener `id` on whichever loop serves it; false when a loop could not be asked.
    package func kick(_ id: ListenerID) -> Bool {
        if timeShift.snapshot?.kick(id) == true { return true }
        return pool.kick(id, of: self)
    }

    /// Moves its raw and HTTP listeners (all, or `id`) to `destination`, on whichever loops serve them
    /// (`NetworkLoop+Move`); `tally` is answered once every loop did.
    package func move(to destination: Broadcaster, id: ListenerID?, tally: MoveTally) -> Bool {
        pool.move(from: self, to: destination, id: id, tally: tally)
    }

    /// Starts serving: its pool's loops (if they are its own, or not started yet) take it on.
    package func start() throws {
        try pool.start()
        pool.attach(self)
    }

    /// Heartbeats of the loops that serve it (for the watchdog); empty before `start`.
    package var heartbeats: [Int] {
        pool.heartbeats
    }

    /// Publishes pages and wakes the loops once for all of them (from the pipeline thread).
    package func publish(_ pages: [OggPage]) {
        guard !pages.isEmpty else { return }
        ring.publish(pages)
        counters.pagesPublished.add(pages.count, ordering: .relaxed)
        publications.add(1, ordering: .releasing)
        pool.published(by: self)
    }

    /// Publishes a run of MP3 frames (a pass-through output) and wakes the loops.
    package func publish(_ chunk: MP3PassThrough.Chunk) {
        ring.publish(chunk)
        counters.pagesPublished.add(1, ordering: .relaxed)
        publications.add(1, ordering: .releasing)
        pool.published(by: self)
    }

    /// The title its ICY listeners are told next (`StreamTitle`).
    package func setStreamTitle(_ title: String) {
        let block = SharedPage(bytes: ICYMetadataBlock.block(title: title), timeline: 0, index: -1)
        icyBlock.withLock { $0 = block }
    }

    /// Stops serving: every loop closes its listeners and forgets it (and a pool of its own stops); returns when
    /// they did (false: not within `timeout` seconds).
    @discardableResult
    package func stop(timeout: Double = 10) -> Bool {
        let detached = pool.detach(self, timeout: timeout)
        guard ownsPool else { return detached }
        return pool.stop(timeout: timeout) && detached
    }

    // MARK: Limits across loops

    /// Counts one more listener from `key` unless `limit` (> 0) are there already.
    package func reserveHost(_ key: HostKey, limit: Int) -> Bool {
        hosts.withLock { hosts in
            let count = hosts[key, default: 0]
            guard limit <= 0 || count < limit else { return false }
            hosts[key] = count + 1
            return true
        }
    }

    /// One listener from `key` left.
    package func releaseHost(_ key: HostKey) {
        hosts.withLock { hosts in
            let count = hosts[key, default: 1] - 1
            hosts[key] = count > 0 ? count : nil
        }
    }
}
