import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// A station: its inputs in priority order, one pipeline thread (Downloaders → the input that plays → stage chain →
/// rings) and one output per encoding: the main one and its renditions, each an Encoder, a page ring and a
/// Broadcaster (its port). The audio is decoded once for all outputs. Inputs come and go and the station switches
/// between them (`InputSelector`); the stream does not: while no input has audio (or it is behind) the Encoders keep
/// encoding silence at real-time pace, so granules stay continuous and listeners stay connected.
public final class Station: Service {
    /// The settings in force; `update` replaces them (a reload), the pipeline reads them when `settingsVersion`
    /// moves.
    let settings: LockedBox<StationConfiguration>
    let settingsVersion = Atomic<Int>(0)
    public var configuration: StationConfiguration { settings.snapshot }
    /// The main output first, then the renditions in the order of the configuration. A reload may add or remove a
    /// rendition (`update`): the others, and their listeners, go on.
    package var outputs: [StationOutput] { outputList.snapshot }
    let outputList: LockedBox<[StationOutput]>
    /// The Encoders of renditions a reload added, made (their header pages already in their rings) for the pipeline
    /// to take by label (`takeArrivingEncoders`).
    let arrivingEncoders = LockedBox<[String: Handoff<Encoder>]>([:])
    /// What new outputs run with: the server's loops, listener places and access log.
    let services: ListenerServices
    /// When it was made (wall clock): the stream's start in Icecast's status.
    package let createdAt = wallClockNow()
    /// The main output's Broadcaster.
    package var broadcaster: Broadcaster { outputs[0].broadcaster }
    private let shared = LockedBox(StationState())
    let pipeline: LockedBox<ServiceThread?> = LockedBox(nil)
    /// The running pushes to Icecast (`Station+Pushes.swift`), and the service that starts and stops them in its
    /// server's group, after the station.
    let pushes = LockedBox<[IcecastPush]>([])
    package var pushService: StationPushes { StationPushes(station: self) }
    let onUnexpectedExit: @Sendable (String, (any Error)?) -> Void
    /// Operators' commands for the pipeline (`submit`), taken and answered each iteration; shared with the desk,
    /// whose admin calls send `killsource` here too.
    package let commands = CommandQueue()
    /// Where the HTTP front end hands it a live source (`source_password`), and the admin calls' requests.
    package let desk: SourceDesk
    /// Its last titles (the pipeline records each one it shows), carried to its successor by a reload.
    package let history: LockedBox<SongHistory>
    /// Its archive writers (`Station+Archive.swift`): the main output's and the MP3 output's; its recorder of live
    /// shows (`record_live`).
    package let archive: ArchiveWriter?
    package let mp3Archive: ArchiveWriter?
    package let recorder: RecordingWriter?

    public var name: String { configuration.name }
    public var state: StationState { shared.snapshot }
    /// Where listeners connect, as `ADDRESS:PORT` (the real port when 0 was asked for).
    public var listenAddress: String { broadcaster.shownAddress }
    /// Its raw TCP port (0: none, `port = none`).
    public var port: UInt16 { broadcaster.listenFD == nil ? 0 : broadcaster.address.port }
    /// Listeners connected now, on all outputs.
    public var listeners: Int {
        outputs.reduce(0) { $0 + $1.broadcaster.counters.listeners.load(ordering: .relaxed) }
    }

    /// Binds the listening ports now (or adopts `socket`), so configuration and port errors surface before start.
    public convenience init(_ configuration: StationConfiguration, adoptedSocket: Int32? = nil) throws {
        try self.init(configuration, adoptedSocket: adoptedSocket, onUnexpectedExit: ServiceThread.terminateProcess)
    }

    /// - Parameter services: its server's network loops, listener places and access log (default: its outputs run
    ///   loops of their own, no access log).
    /// - Parameter renditionSockets: already listening sockets (socket activation) for renditions, by name.
    /// - Parameter onUnexpectedExit: what happens when the pipeline thread ends by itself (tests observe it).
    package init(
        _ configuration: StationConfiguration, services: ListenerServices = ListenerServices(),
        adoptedSocket: Int32? = nil, renditionSockets: [String: Int32] = [:], history: SongHistory = SongHistory(),
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void = ServiceThread.terminateProcess
    ) throws {
        // Adopted sockets not yet owned by a Broadcaster: closed if the station cannot be made, its configuration
        // refused included (a Broadcaster owns its own from the moment it is given it).
        var unowned = Set(
            ([adoptedSocket] + configuration.outputSettings.compactMap { $0.name.flatMap { renditionSockets[$0] } })
                .compactMap { $0 })
        defer { for fd in unowned { _ = Glibc.close(fd) } }
        try configuration.validate()
        self.settings = LockedBox(configuration)
        self.onUnexpectedExit = onUnexpectedExit
        // One audience for all its outputs (and the renditions a reload adds): `max_listeners` is the station's.
        var services = services
        services.audience = StationAudience(limit: configuration.broadcaster.maxListeners)
        self.services = services
        self.history = LockedBox(history)
        desk = SourceDesk(
            station: configuration.name, password: configuration.sourcePassword, accounts: configuration.liveAccounts,
            paths: configuration.sourcePaths,
            timeout: configuration.sourceTimeout, commands: commands)
        var outputs: [StationOutput] = []
        for output in configuration.outputSettings {
            let socket = output.name == nil ? adoptedSocket : output.name.flatMap { renditionSockets[$0] }
            if let socket { unowned.remove(socket) }
            outputs.append(
                try Self.makeOutput(
                    output, of: configuration, socket: socket, services: self.services,
                    onUnexpectedExit: onUnexpectedExit))
        }
        outputList = LockedBox(outputs)
        let archives = try Self.makeArchives(configuration)
        archive = archives.main
        mp3Archive = archives.mp3
        recorder = try Self.makeRecorder(configuration)
    }

    /// One output: its page ring, its Broadcaster (bound now, or adopting `socket`) and its HLS stream.
    static func makeOutput(
        _ output: StationConfiguration.OutputSettings, of configuration: StationConfiguration, socket: Int32?,
        services: ListenerServices, onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void
    ) throws -> StationOutput {
        let ring = PageRing(capacity: max(16, Self.ringPages(output)), maxBytes: Self.ringBytes(output.broadcaster))
        let label = output.name.map { "\(configuration.name)/\($0)" } ?? configuration.name
        let broadcaster = try Broadcaster(
            name: label, configuration: output.broadcaster, ring: ring, adoptedSocket: socket,
            onUnexpectedExit: onUnexpectedExit, services: services, station: configuration.name,
            mount: "/" + output.mount)
        return StationOutput(
            name: output.name, mount: output.mount, format: output.format, encoderSettings: LockedBox(output.encoder),
            broadcaster: broadcaster,
            hls: configuration.hls && output.format == .oggOpus ? HLSStream(settings: configuration.hlsSettings) : nil)
    }

    /// Its listening sockets that `successor` keeps at the same address (the main output's, and each rendition's by
    /// name), duplicated (`F_DUPFD_CLOEXEC`: the same kernel socket) for the successor to adopt. A station restarted
    /// this way never closes its port: connections that arrive meanwhile wait in the backlog for the successor,
    /// none is refused, and it works the same under socket activation, where binding again cannot.
    package func listeningSockets(
        for successor: StationConfiguration
    ) throws -> (main: Int32?, renditions: [String: Int32]) {
        var main: Int32?
        var renditions: [String: Int32] = [:]
        do {
            for (output, was) in zip(outputs, configuration.outputSettings) {
                guard let wanted = successor.outputSettings.first(where: { $0.name == was.name }),
                    wanted.broadcaster.bind == was.broadcaster.bind,
                    wanted.broadcaster.rawPort == was.broadcaster.rawPort,
                    let listening = output.broadcaster.listenFD
                else { continue }
                let fd = try syscall("fcntl F_DUPFD_CLOEXEC") { fcntl(listening, F_DUPFD_CLOEXEC, 0) }
                if let name = output.name { renditions[name] = fd } else { main = fd }
            }
        } catch {
            for fd in [main].compactMap({ $0 }) + renditions.values { _ = Glibc.close(fd) }
            throw error
        }
        return (main, renditions)
    }

    /// A station a reload replaced or removed ends here, with its rings, encoders and (unless handed on) ports.
    deinit { Log.debug("\(name): released") }

    /// Pages an output's ring needs for its lag allowance and burst.
    /// Bytes an output's ring holds at most: its seconds at twice Opus's highest stereo rate (510 kb/s), plus 1 MB
    /// — about 7 MB with the default lag and burst, where 96 kb/s needs 0.3 MB.
    static func ringBytes(_ broadcaster: BroadcasterConfiguration) -> Int {
        let keep = broadcaster.maxLag * 2 + broadcaster.burst + 2
        return Int(min(keep, 3_600) * 2 * 510_000 / 8) + (1 << 20)
    }

    /// An MP3 output's ring holds a run of frames per publication: at most one per frame, and the shortest frame
    /// is 8 ms (Layer I at 48 kHz).
    static func ringPages(_ output: StationConfiguration.OutputSettings) -> Int {
        let pageSeconds = output.format == .mp3 ? 0.008 : Double(output.encoder.pageDuration) / 1000
        let keep = output.broadcaster.maxLag * 2 + output.broadcaster.burst + 2
        return Int((keep / pageSeconds).rounded(.up))
    }

    /// Queues `command` for the pipeline, which answers the ticket within an iteration. Throws, saying which inputs
    /// there are, for a force of an input the station does not have, and when too many commands wait.
    package func submit(_ command: StationCommand) throws(ConfigurationError) -> CommandTicket {
        if case .force(let input) = command, !configuration.inputs.contains(where: { $0.name == input }) {
            throw ConfigurationError(
                "station \(name) has no input \(Sanitized.text(input, limit: 64)): its inputs are "
                    + configuration.inputs.map(\.name).joined(separator: ", "))
        }
        guard let ticket = commands.submit(command) else {
            throw ConfigurationError("station \(name): too many requests at once: try again")
        }
        return ticket
    }

    /// Heartbeats of the station's threads (pipeline, every output's network loop, pushes), for the watchdog.
    package var heartbeats: [Int] {
        [pipeline.snapshot?.heartbeat.load(ordering: .relaxed) ?? 0] + outputs.flatMap(\.broadcaster.heartbeats)
            + pushes.snapshot.map(\.heartbeat)
    }

    /// Starts every output's network loop, then the pipeline thread (its pushes are `pushService`'s).
    public func start() throws {
        let chain = try Pipeline.makeChain(configuration, outputs: outputs)
        var started: [Broadcaster] = []
        let handoff = Handoff(value: chain)
        let thread = ServiceThread(name: "pipe-\(name)", onUnexpectedExit: onUnexpectedExit) { [self] thread in
            let pipeline = Pipeline(station: self, chain: handoff.value, state: shared)
            pipeline.run(in: thread)
        }
        do {
            for output in outputs {
                try output.broadcaster.start()
                started.append(output.broadcaster)
            }
            try startArchives()
            try thread.start()
        } catch {
            _ = stopArchives(timeout: 5)
            for broadcaster in started { _ = broadcaster.stop(timeout: 5) }
            throw error
        }
        pipeline.withLock { $0 = thread }
    }

    /// Stops the pushes, the pipeline, then every output's listeners; returns when every thread is joined (false: one outlived
    /// `timeout`).
    @discardableResult
    public func stop(timeout: Double = 10) -> Bool {
        let pushesStopped = stopPushes(timeout: timeout)
        let thread = pipeline.take()
        var stopped = (thread?.stop(timeout: timeout) ?? true) && pushesStopped
        if !stopArchives(timeout: timeout) { stopped = false }
        commands.refuseAll("station \(name) stopped")
        for output in outputs where !output.broadcaster.stop(timeout: timeout) { stopped = false }
        return stopped
    }
}

/// One output of a station: the main one (`name` nil) or a rendition, with its encoding, its HTTP mount and the
/// Broadcaster (page ring, port, network thread) that serves its listeners.
package struct StationOutput: Sendable {
    /// nil for the main output, else the rendition's name.
    package let name: String?
    /// The HTTP mount path, without the leading `/`.
    package let mount: String
    /// Opus in Ogg (the main output and renditions, each with an Encoder), or the MP3 pass-through.
    package let format: PublicDirectory.Format
    /// Its encoder's settings (a reload may retune the bitrate, complexity and constrained VBR).
    package var encoder: EncoderConfiguration { encoderSettings.snapshot }
    let encoderSettings: LockedBox<EncoderConfiguration>
    package let broadcaster: Broadcaster
    /// Its live HLS stream, fed the pages its listeners get (nil with `hls = no`).
    package var hls: HLSStream? = nil

    /// Its label in status and metrics: `main` for the station's own output, else the rendition's name.
    package var label: String { name ?? RenditionConfiguration.mainName }
}

extension StationConfiguration {
    typealias OutputSettings = (
        name: String?, mount: String, format: PublicDirectory.Format, encoder: EncoderConfiguration,
        broadcaster: BroadcasterConfiguration
    )

    /// An output in messages: `station a`, `rendition a/low`, `the MP3 output of station a`.
    static func describe(_ output: OutputSettings, of station: String) -> String {
        if output.format == .mp3 { return "the MP3 output of station \(station)" }
        return output.name.map { "rendition \(station)/\($0)" } ?? "station \(station)"
    }

    /// Every output's settings, the main output first (name nil), then the renditions, then the MP3 pass-through
    /// (named `mp3`, the station's listening settings on its own port, no encoder of its own: the one given is not
    /// used).
    var outputSettings: [OutputSettings] {
        var main = broadcaster
        main.peerTimeout = peerTimeout
        var mp3Output = main
        mp3Output.port = mp3Port
        // A station without a raw port (`port = none`, a protected station) has none on its MP3 output either,
        // unless `mp3_port` names one (refused on a protected station). A rendition says for itself (`NAME:none:…`).
        mp3Output.rawListeners = main.rawListeners || mp3Port != 0
        return [(nil, mount, .oggOpus, encoder, main)]
            + renditions.map {
                var listening = $0.broadcaster
                listening.peerTimeout = peerTimeout
                // The station's latency mode is every output's.
                var encoding = $0.encoder
                encoding.lowDelay = encoder.lowDelay
                return ($0.name, $0.mount(in: name), .oggOpus, encoding, listening)
            }
            + (mp3 ? [(Self.mp3OutputName, mp3Mount, .mp3, encoder, mp3Output)] : [])
    }
}

extension StationConfiguration {
    /// The true-peak limiter's own ceiling (dBTP; nil: none): `truePeak`, less what the Opus encoder of the output
    /// with the fewest bits per channel can add to the peaks (`CodecOvershoot`), so that every listener's decoded
    /// audio stays under `truePeak`.
    var limiterCeiling: Double? {
        guard let truePeak else { return nil }
        let margins = outputSettings.filter { $0.format == .oggOpus }.map {
            CodecOvershoot.margin(bitrate: $0.encoder.bitrate, channels: $0.encoder.channels)
        }
        return truePeak - (margins.max() ?? 0)
    }
}
