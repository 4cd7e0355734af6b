import Glibc
import Synchronization

/// A station: one upstream, one pipeline thread (Downloader → stage chain → ring) and one Broadcaster. The upstream
/// can come and go; the stream does not: while it is away (or behind) the Encoder keeps encoding silence at
/// real-time pace, so granules stay continuous and listeners stay connected.
public final class Station: Service {
    /// The settings in force; `update` replaces them (a reload), the pipeline reads them when `settingsVersion`
    /// moves.
    private let settings: LockedBox<StationConfiguration>
    let settingsVersion = Atomic<Int>(0)
    public var configuration: StationConfiguration { settings.snapshot }
    package let broadcaster: Broadcaster
    private let shared = LockedBox(StationState())
    private let pipeline: LockedBox<ServiceThread?> = LockedBox(nil)
    /// The running pushes to Icecast (`Station+Pushes.swift`).
    let pushes = LockedBox<[IcecastPush]>([])
    let onUnexpectedExit: @Sendable (String, (any Error)?) -> Void

    public var name: String { configuration.name }
    public var state: StationState { shared.snapshot }
    /// Where listeners connect, as `ADDRESS:PORT` (the real port when 0 was asked for).
    public var listenAddress: String { broadcaster.address.description }
    public var port: UInt16 { broadcaster.address.port }
    /// Where listeners reach the station: its main output (renditions add more).
    package var outputs: [StationOutput] {
        let configuration = configuration
        return [
            StationOutput(
                name: nil, mount: configuration.mountPath, broadcaster: broadcaster,
                bitrate: configuration.encoder.bitrate, channels: 2)
        ]
    }

    /// Listeners connected now.
    public var listeners: Int { broadcaster.counters.listeners.load(ordering: .relaxed) }

    /// Binds the listening port now (or adopts `socket`), so configuration and port errors surface before start.
    public convenience init(_ configuration: StationConfiguration, adoptedSocket: Int32? = nil) throws {
        try self.init(configuration, adoptedSocket: adoptedSocket, onUnexpectedExit: ServiceThread.terminateProcess)
    }

    /// - Parameter onUnexpectedExit: what happens when the pipeline thread ends by itself (tests observe it).
    package init(
        _ configuration: StationConfiguration, adoptedSocket: Int32? = nil,
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void
    ) throws {
        try configuration.validate()
        self.settings = LockedBox(configuration)
        self.onUnexpectedExit = onUnexpectedExit
        let pageSeconds = Double(configuration.encoder.pageDuration) / 1000
        let keep = configuration.broadcaster.maxLag * 2 + configuration.broadcaster.burst + 2
        let ring = PageRing(capacity: max(16, Int((keep / pageSeconds).rounded(.up))))
        broadcaster = try Broadcaster(
            name: configuration.name, configuration: configuration.broadcaster, ring: ring,
            adoptedSocket: adoptedSocket)
    }

    /// Whether `new` can replace this station's settings while it runs: everything but the encoding (bitrate,
    /// complexity, page duration, rates — its Ogg stream would change), the listening address, and a lag or burst
    /// the page ring was not sized for.
    package func canUpdate(to new: StationConfiguration) -> Bool {
        let old = configuration
        guard new.name == old.name, new.encoder == old.encoder, new.commonRate == old.commonRate,
            new.broadcaster.bind == old.broadcaster.bind, new.broadcaster.port == old.broadcaster.port
        else { return false }
        let pageSeconds = Double(new.encoder.pageDuration) / 1000
        let keep = new.broadcaster.maxLag * 2 + new.broadcaster.burst + 2
        return Int((keep / pageSeconds).rounded(.up)) <= broadcaster.ring.capacity
    }

    /// Applies `new` to the running station (see `canUpdate`): listeners, pipeline and Ogg stream go on; a new
    /// upstream is connected to at once.
    package func update(_ new: StationConfiguration) throws {
        guard canUpdate(to: new) else {
            throw ConfigurationError("station \(name): this change needs a restart of the station")
        }
        try new.validate()
        try broadcaster.update(new.broadcaster)
        settings.withLock { $0 = new }
        settingsVersion.add(1, ordering: .releasing)
        if pipeline.snapshot != nil { try updatePushes(to: new) }
    }

    /// Heartbeats of the station's threads (pipeline, network loop, pushes), for the watchdog.
    package var heartbeats: [Int] {
        [pipeline.snapshot?.heartbeat.load(ordering: .relaxed) ?? 0] + broadcaster.heartbeats
            + pushes.snapshot.map(\.heartbeat)
    }

    /// Starts the network loop, then the pipeline thread, then the pushes.
    public func start() throws {
        var encoderConfiguration = configuration.encoder
        encoderConfiguration.inputRate = configuration.commonRate
        let encoder = try Encoder(encoderConfiguration)
        broadcaster.ring.setHeaders(encoder.headerPages)
        try broadcaster.start()
        let handoff = Handoff(value: encoder)
        let thread = ServiceThread(name: "pipe-\(name)", onUnexpectedExit: onUnexpectedExit) { [self] thread in
            let pipeline = Pipeline(station: self, encoder: handoff.value, state: shared)
            pipeline.run(in: thread)
        }
        do {
            try thread.start()
        } catch {
            _ = broadcaster.stop(timeout: 5)
            throw error
        }
        pipeline.withLock { $0 = thread }
        do {
            try updatePushes(to: configuration)
        } catch {
            stop(timeout: 5)
            throw error
        }
    }

    /// Stops the pushes, the pipeline, then the listeners; returns when every thread is joined (false: one outlived
    /// `timeout`).
    @discardableResult
    public func stop(timeout: Double = 10) -> Bool {
        let pushesStopped = stopPushes(timeout: timeout)
        let thread = pipeline.take()
        let pipelineStopped = thread?.stop(timeout: timeout) ?? true
        return broadcaster.stop(timeout: timeout) && pipelineStopped && pushesStopped
    }
}

/// One of a station's outputs: an encoding of its audio with its own listeners, raw TCP port and HTTP mount.
package struct StationOutput: Sendable {
    /// The rendition's name; nil for the main output.
    package var name: String?
    /// The HTTP mount path, `/main.opus`.
    package var mount: String
    package var broadcaster: Broadcaster
    package var bitrate: Int
    package var channels: Int
}
