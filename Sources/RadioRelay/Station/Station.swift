import Foundation
import Synchronization

/// A station: one upstream, one pipeline thread (Downloader → ICY demux → Parser → Reader → Encoder → ring) and one
/// Broadcaster. The upstream can come and go; the stream does not: while it is away (or behind) the Encoder keeps
/// encoding silence at real-time pace, so granules stay continuous and listeners stay connected.
public final class Station: Sendable {
    public let configuration: StationConfiguration
    public let broadcaster: Broadcaster
    private let shared = LockedBox(StationState())
    private let stopping = Atomic<Bool>(false)
    private let finished = LockedBox<Bool>(true)
    /// Advanced by every iteration of the pipeline thread (for the watchdog).
    let heartbeat = Atomic<Int>(0)

    public var name: String { configuration.name }
    public var state: StationState { shared.snapshot }

    /// Binds the listening port now (or adopts `socket`), so configuration and port errors surface before start.
    public init(_ configuration: StationConfiguration, adoptedSocket: Int32? = nil) throws {
        try configuration.validate()
        self.configuration = configuration
        let pageSeconds = Double(configuration.encoder.pageDuration) / 1000
        let keep = configuration.broadcaster.maxLag * 2 + configuration.broadcaster.burst + 2
        let ring = PageRing(capacity: max(16, Int((keep / pageSeconds).rounded(.up))))
        broadcaster = try Broadcaster(name: configuration.name, configuration: configuration.broadcaster, ring: ring,
                                      adoptedSocket: adoptedSocket)
    }

    public func start() throws {
        var encoderConfiguration = configuration.encoder
        encoderConfiguration.inputRate = configuration.commonRate
        let encoder = try Encoder(encoderConfiguration)
        broadcaster.ring.setHeaders(encoder.headerPages)
        broadcaster.start()
        finished.withLock { $0 = false }
        let handoff = Handoff(value: encoder)
        let thread = Thread { [self] in
            let pipeline = Pipeline(station: self, encoder: handoff.value, state: shared)
            pipeline.run(until: stopping, heartbeat: heartbeat)
            finished.withLock { $0 = true }
        }
        thread.name = "pipe-\(name)"
        thread.start()
    }

    /// Stops the pipeline and the listeners; returns when both threads are done.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        while !finished.snapshot { usleep(2_000) }
        broadcaster.stop()
    }
}
