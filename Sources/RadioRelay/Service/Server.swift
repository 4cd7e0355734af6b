import CLinux
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// The one place that builds a server from its configuration: the network loops, the access log, the stations
/// (each handed the loops, the listener places and the access log), their pushes, the HTTP front end and the status
/// endpoint — every one a service of one `ServiceGroup`, started in that order and stopped in reverse. Nothing is
/// global: two servers in one process each have their own (they may share a `ListenerBudget`, which the caller
/// derives once from the process's open-files limit and hands to both); `start` and `stop` are calls.
///
/// What stays process-wide is `run`'s: the log level, the signals (SIGTERM and SIGINT stop, SIGHUP reloads the
/// configuration: `Server+Reload.swift`), and the conversation with systemd (READY, STATUS, WATCHDOG, RELOADING,
/// STOPPING). The watchdog is pinged only while every thread of every station (and the front end's and the status
/// endpoint's) keeps beating: a pipeline or network loop that hangs stops the pings, and systemd restarts the
/// service (`WatchdogSec=`).
package final class Server {
    /// What runs: the configuration it was made from, with what reloads applied since.
    package internal(set) var configuration: ServerConfiguration
    /// The network loops every output's listeners are served by.
    package let pool: NetworkPool
    /// The access log (off unless `access_log` names a file).
    package let accessLog: AccessLog
    /// The listener places all its outputs share.
    package let budget: ListenerBudget
    /// The one admission point of every output and the front end, with its roster (`/status.json`'s listeners):
    /// stations a reload starts get the same.
    package let admission: ListenerAdmission
    /// The stations running now (a reload adds, replaces and removes some), a service of the group. Set from the
    /// calling thread only.
    package internal(set) var stations: [Station] {
        get { stationServices.stations }
        set {
            stationServices.stations = newValue
            status?.setStations(newValue)
            http?.setStations(newValue)
        }
    }
    private let stationServices: StationServices
    /// The status endpoint, when the configuration has a status address.
    package let status: StatusServer?
    /// The public HTTP address (mounts, `/`, events), when the configuration has one.
    package let http: HTTPFront?
    /// Starts everything in order (stopping what started if one fails) and stops it in reverse. It holds the
    /// stations through `stationServices` (the ones running now), so a station a reload stops is released at once
    /// (its listening socket closed, its port free for its successor).
    private let group: ServiceGroup
    private let accessLogService: AccessLogService
    let notifier = SystemdNotifier()
    /// Reads the configuration again on SIGHUP; nil when the stations did not come from a file.
    let reload: (() throws -> ServerConfiguration)?
    /// The log level the command line forced (it wins over the file's on a reload too).
    let logLevelOverride: Log.Priority?
    let onUnexpectedExit: @Sendable (String, (any Error)?) -> Void

    /// Builds every part now — binding every listening address (or adopting the sockets systemd `passed`), so that
    /// a taken port or a bad address fails here, before anything starts.
    /// - Parameters:
    ///   - budget: the listener places, shared by every server of the process (`ResourceLimits.apply` caps it).
    ///   - passed: the listening sockets systemd passed (socket activation), given to the stations, renditions,
    ///     status endpoint and HTTP address they name; the others bind their own.
    ///   - statusLimits, httpLimits: the endpoints' request limits (tests shorten them).
    package init(
        _ configuration: ServerConfiguration, budget: ListenerBudget, passed: [SocketActivation.Passed] = [],
        reload: (() throws -> ServerConfiguration)? = nil, logLevelOverride: Log.Priority? = nil,
        statusLimits: StatusServer.Limits = StatusServer.Limits(), httpLimits: HTTPFront.Limits = HTTPFront.Limits(),
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void = ServiceThread.terminateProcess
    ) throws {
        let settings = configuration.server
        self.configuration = configuration
        self.budget = budget
        self.reload = reload
        self.logLevelOverride = logLevelOverride
        self.onUnexpectedExit = onUnexpectedExit
        // Its authenticator (the protected stations' backend calls) is a service of the group.
        admission = ListenerAdmission(authenticator: Authenticator(onUnexpectedExit: onUnexpectedExit))
        pool = try NetworkPool(threads: Self.loops(settings), onUnexpectedExit: onUnexpectedExit)
        accessLog = AccessLog()
        accessLogService = AccessLogService(log: accessLog, path: settings.accessLog)
        let assignment = try SocketActivation.assign(
            passed, to: configuration.stations.flatMap(SocketActivation.listeners(of:)),
            status: settings.status.map { ($0.host, $0.port) }, http: settings.http.map { ($0.host, $0.port) })
        let services = ListenerServices(pool: pool, budget: budget, accessLog: accessLog, admission: admission)
        var stations: [Station] = []
        for station in configuration.stations {
            stations.append(
                try Station(
                    station, services: services, adoptedSocket: assignment.stations[station.name],
                    renditionSockets: assignment.renditions(of: station), onUnexpectedExit: onUnexpectedExit))
        }
        stationServices = StationServices(stations)
        let admission = self.admission
        status = try settings.status.map {
            try StatusServer(
                address: try Self.socketAddress($0, "status"), stations: stations, limits: statusLimits,
                adoptedSocket: assignment.status, access: settings.statusGate, budget: budget,
                admission: admission,
                onUnexpectedExit: onUnexpectedExit)
        }
        http = try settings.http.map {
            try HTTPFront(
                address: try Self.socketAddress($0, "http"), stations: stations, limits: httpLimits,
                adoptedSocket: assignment.http, budget: budget, proxyProtocol: settings.httpProxyProtocol,
                trustedProxies: settings.httpProxyFrom ?? .loopback, onUnexpectedExit: onUnexpectedExit)
        }
        http?.setPublicURL(settings.publicURL)
        http?.setAdmin(settings.admin)
        http?.setAccounts(configuration.accounts)
        http?.setForwarding(settings.forwarding)
        admission.setPolicy(Self.policy(configuration.stations))
        // Every network loop of the pool, by thread name, and the HTTP front end.
        status?.reportLoops(pool.members.map { ($0.name, $0.activity) } + (http.map { [("http", $0.activity)] } ?? []))
        // The loops first, the access log, the authenticator (stopped after the stations, so that the removes of the
        // listeners they close are sent), each station then its pushes, the HTTP front end (after the stations it
        // hands listeners to), the status endpoint last.
        let parts: [any Service] =
            [pool, accessLogService, admission.authenticator, stationServices] + (http.map { [$0] } ?? [])
            + (status.map { [$0] } ?? [])
        group = ServiceGroup(parts)
    }

    /// The network loops for `settings`: its `network_threads`, else the CPUs the process may use.
    package static func loops(_ settings: ServerSettings) -> Int {
        settings.networkThreads ?? NetworkThreads.automatic()
    }

    private static func socketAddress(_ address: ListenAddress, _ purpose: String) throws -> SocketAddress {
        guard let parsed = address.socketAddress else {
            throw ConfigurationError("\(purpose) address \(address) is not an IPv4 or IPv6 address")
        }
        return parsed
    }

    /// Starts every service in order (those started are stopped again if one fails), and says so in the log.
    package func start() throws {
        let settings = configuration.server
        Log.notice(
            "network loops: \(pool.members.count) (\(settings.networkThreads == nil ? "auto: the CPUs this process may use" : "network_threads")), shared by every station"
        )
        for warning in configuration.warnings { Log.warning(warning) }
        for note in configuration.notes { Log.notice(note) }
        for station in stations { Self.announce(station) }
        try group.start()
    }

    /// Stops the status endpoint, the HTTP front end, every station (with its pushes) in reverse order, the access
    /// log (the lines of the listeners the stop closed get at most a second) and the loops. Returns false when a
    /// thread outlived `timeout`.
    @discardableResult
    package func stop(timeout: Double = 5) -> Bool {
        group.stop(timeout: timeout)
    }

    /// The start-up lines of a station: where it listens, its settings in force, each other output.
    static func announce(_ station: Station) {
        let configuration = station.configuration
        Log.notice(
            "radio-relay \(RadioRelayVersion.string): station \(configuration.name) relays "
                + "\(configuration.inputsShown) "
                + (station.port == 0
                    ? "with no raw TCP port (HTTP only); "
                    : "on \(station.listenAddress) (listen: ffplay tcp://HOST:\(station.port)); ")
                + "pages \(configuration.encoder.pageDuration) ms, "
                + "flush \(configuration.broadcaster.flush), lead \(configuration.maxLead) s")
        for output in station.outputs.dropFirst() {
            if output.format == .mp3 {
                // Its bitrate is the upstream's, known once it connects: the "upstream format" line gives it.
                Log.notice(
                    "station \(configuration.name): MP3 pass-through (the upstream's own frames) on "
                        + "\(output.broadcaster.shownAddress)")
                continue
            }
            Log.notice(
                "station \(configuration.name): rendition \(output.label) at \(output.encoder.bitrate / 1000)k "
                    + "\(output.encoder.channels == 1 ? "mono" : "stereo") on \(output.broadcaster.shownAddress)")
        }
    }

    // MARK: The process

    /// Blocks the signals it handles in every thread: call before any thread is started.
    package static func blockSignals() {
        var set = handledSignals
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    private static var handledSignals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, signal) }
        return set
    }

    /// Starts, then waits for a stop signal on the calling thread, reloading on SIGHUP, keeping systemd told;
    /// stops everything before it returns.
    package func run() throws {
        try start()
        notifier.ready(status: statusLine())
        var set = Self.handledSignals
        var lastStatus = monotonicNow()
        // A thread may go half the watchdog interval without a beat (never under a second: a network loop sleeps up to
        // half a second between beats).
        var watchdog = Watchdog()
        watchdog.allowance = max(1, notifier.watchdogInterval ?? 1)
        let tick = min(1.0, notifier.watchdogInterval ?? 1.0)
        while true {
            var timeout = timespec(tv_sec: Int(tick), tv_nsec: Int((tick - tick.rounded(.down)) * 1e9))
            let signal = sigtimedwait(&set, nil, &timeout)
            if signal == SIGTERM || signal == SIGINT {
                Log.notice("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                break
            }
            if signal == SIGHUP { reloadConfiguration() }
            if notifier.watchdogInterval != nil {
                let beats = heartbeats
                switch watchdog.check(beats: beats, now: monotonicNow()) {
                case .alive: notifier.watchdog()
                case .stuck(let seconds):
                    Log.error(
                        "a server thread has not run for \(Int(exactly: seconds.rounded()) ?? 0) s; withholding the watchdog ping"
                    )
                }
            }
            if monotonicNow() - lastStatus >= 5 {
                notifier.status(statusLine())
                lastStatus = monotonicNow()
            }
        }
        notifier.stopping()
        if !stop(timeout: 5) { Log.warning("a thread did not stop in time") }
        Log.notice("stopped")
    }

    /// Every thread's heartbeat: the stations' (pipelines, loops, pushes), the front end's and the status
    /// endpoint's.
    var heartbeats: [Int] {
        stations.flatMap(\.heartbeats) + (status?.heartbeats ?? []) + (http?.heartbeats ?? [])
            + admission.authenticator.heartbeats
    }

    /// `STATUS=`: stations with their upstream up out of all, listeners in all, then each station.
    func statusLine() -> String {
        let up = stations.filter { $0.state.upstream == .connected }.count
        let listeners = stations.reduce(0) { $0 + $1.listeners }
        let each = stations.map { station in
            let state = station.state
            let upstream: String
            switch state.upstream {
            case .connected: upstream = "upstream up"
            case .connecting: upstream = "connecting"
            case .retrying: upstream = "upstream down"
            }
            return "\(station.name): \(station.listeners) listeners, \(upstream)"
        }
        return (["\(up)/\(stations.count) stations up, \(listeners) listeners"] + each).joined(separator: "; ")
    }

    /// The whole life of a server process (`radio-relay serve`, `--config`): the log level, the signals blocked,
    /// the listener budget derived once from the open-files limit, the sockets systemd passed, the server built and
    /// run until a stop signal. Errors go through the log, so that journald records them; returns the exit status.
    /// - Parameters:
    ///   - load: reads the configuration (the command line's, or the config file).
    ///   - reload: reads it again on SIGHUP (`--config`); nil: a reload changes nothing.
    ///   - logLevelOverride: the command line's `--log-level`, which wins over the file's.
    package static func serve(
        _ load: () throws -> ServerConfiguration, reload: (() throws -> ServerConfiguration)? = nil,
        logLevelOverride: Log.Priority? = nil
    ) -> ExitCode {
        blockSignals()
        do {
            let configuration = try load()
            Log.threshold = logLevelOverride ?? configuration.server.logLevel
            let budget = ListenerBudget()
            ResourceLimits.apply(
                configured: configuration.listenerLimits, loops: loops(configuration.server), budget: budget)
            let passed = try SocketActivation.passed()
            if !passed.isEmpty { Log.notice("socket activation: \(passed.count) listening socket(s) from systemd") }
            let server = try Server(
                configuration, budget: budget, passed: passed, reload: reload, logLevelOverride: logLevelOverride)
            try server.run()
            return .ok
        } catch let error as ConfigFileError {
            Log.threshold = logLevelOverride ?? .info
            for message in error.messages { Log.error(message) }
            return ExitCode(for: error)
        } catch {
            Log.error("\(error)")
            return ExitCode(for: error)
        }
    }
}

@available(*, unavailable) extension Server: Sendable {}
