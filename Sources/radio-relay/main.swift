import Foundation
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The executable: parse (in the library, unit-tested), run, and turn the outcome into a sysexits status.

/// Ends the process with `error`'s message on stderr and its exit status.
func fail(_ error: any Error) -> Never {
    StandardError.write("radio-relay: \(error)\n")
    exit(ExitCode(for: error).rawValue)
}

func transcode(input: String, output: String, options: Transcoder.Options) -> Never {
    let interactive = isatty(STDERR_FILENO) == 1
    var lastShown = Date.distantPast
    let started = Date()
    do {
        let summary = try Transcoder(options: options).run(input: input, output: output) { progress in
            guard interactive, Date().timeIntervalSince(lastShown) > 0.2 else { return }
            lastShown = Date()
            StandardError.write("\r" + progress.report)
        }
        if interactive { StandardError.write("\r\u{1B}[K") }
        StandardError.write(
            summary.report(
                input: input, output: output,
                elapsed: Date().timeIntervalSince(started)) + "\n")
        exit(ExitCode.ok.rawValue)
    } catch {
        if interactive { StandardError.write("\r\u{1B}[K") }
        fail(error)
    }
}

/// The start-up lines of a station: where it listens, its settings in force, each rendition.
///
/// A function of its own, not inline in `serve`'s loop: there, iterating `station.outputs.dropFirst()` kept the
/// outputs' array alive for the rest of `serve` in release builds, so the first station's Broadcaster — its listening
/// descriptor and eventfd — outlived a reload that replaced it (found by `bench/reload.py`'s descriptor count).
func announce(_ station: Station) {
    let configuration = station.configuration
    Log.notice(
        "radio-relay \(RadioRelayVersion.string): station \(configuration.name) relays "
            + "\(Redaction.text(configuration.upstream)) on \(station.listenAddress) "
            + "(listen: ffplay tcp://HOST:\(station.port)); pages \(configuration.encoder.pageDuration) ms, "
            + "flush \(configuration.broadcaster.flush), "
            + "lead \(configuration.maxLead) s")
    for output in station.outputs.dropFirst() {
        if output.format == .mp3 {
            // Its bitrate is the upstream's, known once it connects: the "upstream format" line gives it.
            Log.notice(
                "station \(configuration.name): MP3 pass-through (the upstream's own frames) on "
                    + "\(output.broadcaster.address)")
            continue
        }
        Log.notice(
            "station \(configuration.name): rendition \(output.label) at \(output.encoder.bitrate / 1000)k "
                + "\(output.encoder.channels == 1 ? "mono" : "stereo") on \(output.broadcaster.address)")
    }
}

/// Runs `configurations` until SIGTERM or SIGINT; errors go through the log, so that journald records them.
/// `reload`: reads the configuration again on SIGHUP (`--config`); `logLevelOverride`: the command line's level.
/// `status`: where the status endpoint listens (a config file's `[server] status`); nil: no endpoint.
func serve(
    _ configurations: () throws -> [StationConfiguration], logLevel: Log.Priority,
    status: ConfigFile.ListenAddress? = nil, http: ConfigFile.ListenAddress? = nil, httpProxyProtocol: Bool = false,
    httpProxyFrom: TrustedProxies? = nil, statusAccess: StatusAccess = StatusAccess(),
    reload: (() throws -> ConfigFile)? = nil,
    logLevelOverride: Log.Priority? = nil, networkThreads: Int? = nil, accessLog: String? = nil
) -> Never {
    Log.threshold = logLevel
    Server.blockSignals()
    do {
        // Opened by the log's own thread: a FIFO without a reader or a hung disk cannot hold the start-up.
        if let accessLog { AccessLog.shared.open(path: accessLog) }
        // One pool of network loops for every output, made before the first of them (a reload's stations join it).
        let threads = networkThreads ?? NetworkThreads.automatic()
        let pool = try NetworkPool(threads: threads)
        NetworkPool.process.withLock { $0 = pool }
        try pool.start()
        Log.notice(
            "network loops: \(pool.members.count) (\(networkThreads == nil ? "auto: the CPUs this process may use" : "network_threads")), shared by every station"
        )
        let configured = try configurations()
        for note in TrustedProxies.notes(
            stations: configured, httpProxyProtocol: http != nil && httpProxyProtocol, httpProxyFrom: httpProxyFrom)
        {
            Log.notice(note)
        }
        // Sockets systemd passed (socket activation) go to their stations and renditions (named STATION/NAME); the
        // others bind their own.
        let passed = try SocketActivation.passed()
        let assignment = try SocketActivation.assign(
            passed, to: configured.flatMap(SocketActivation.listeners(of:)), status: status.map { ($0.host, $0.port) },
            http: http.map { ($0.host, $0.port) })
        if !passed.isEmpty {
            Log.notice("socket activation: \(passed.count) listening socket(s) from systemd")
        }
        var stations: [Station] = []
        for configuration in configured {
            let station = try Station(
                configuration, adoptedSocket: assignment.stations[configuration.name],
                renditionSockets: assignment.renditions(of: configuration))
            announce(station)
            stations.append(station)
        }
        func socketAddress(_ address: ConfigFile.ListenAddress, _ purpose: String) throws -> SocketAddress {
            guard let parsed = SocketAddress(host: address.host, port: UInt16(clamping: address.port)) else {
                throw ConfigurationError("\(purpose) address \(address) is not an IPv4 or IPv6 address")
            }
            return parsed
        }
        let server = try Server(
            stations: stations, status: status.map { try socketAddress($0, "status") }, statusSocket: assignment.status,
            statusAccess: statusAccess,
            http: http.map { try socketAddress($0, "http") }, httpSocket: assignment.http,
            httpProxyProtocol: httpProxyProtocol, httpProxyFrom: httpProxyFrom, reload: reload,
            logLevelOverride: logLevelOverride)

        // The server owns the stations from here: a station a reload stops must be released, closing its port.
        stations.removeAll()
        try server.run()
        // The lines of the listeners the stop closed get at most a second; the log's own at most another at exit.
        AccessLog.shared.stop(timeout: 1)
        exit(ExitCode.ok.rawValue)
    } catch let error as ConfigFileError {
        for message in error.messages { Log.error(message) }
        exit(ExitCode(for: error).rawValue)
    } catch {
        Log.error("\(error)")
        exit(ExitCode(for: error).rawValue)
    }
}

/// `--config FILE`: the file's log level applies unless `--log-level` overrides it.
func serve(configPath path: String, logLevel: Log.Priority?) -> Never {
    do {
        let file = try ConfigFile.load(path: path)
        serve(
            { file.stations }, logLevel: logLevel ?? file.server.logLevel, status: file.server.status,
            http: file.server.http, httpProxyProtocol: file.server.httpProxyProtocol,
            httpProxyFrom: file.server.httpProxyFrom, statusAccess: file.server.statusAccess,
            reload: { try ConfigFile.load(path: path) }, logLevelOverride: logLevel,
            networkThreads: file.server.networkThreads, accessLog: file.server.accessLog)
    } catch {
        Log.threshold = logLevel ?? .info
        for message in error.messages { Log.error(message) }
        exit(ExitCode(for: error).rawValue)
    }
}

let command: Command
do {
    command = try Command.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    StandardError.write("radio-relay: \(error.message)\n\(error.hint)\n")
    exit(ExitCode.usage.rawValue)
}

switch command {
case .help(let topic):
    print(topic.text)
case .version:
    print("radio-relay \(RadioRelayVersion.string) (\(RadioRelayVersion.libraries))")
case .serve(let options):
    if let warning = options.secretsWarning { Log.warning(warning) }
    serve(
        { [try options.resolvedStation()] }, logLevel: options.logLevel, status: options.status, http: options.http,
        httpProxyProtocol: options.httpProxyProtocol, httpProxyFrom: options.httpProxyFrom,
        networkThreads: options.networkThreads, accessLog: options.accessLog)
case .serveConfig(let path, let logLevel):
    serve(configPath: path, logLevel: logLevel)
case .checkConfig(let path):
    let check = ConfigCheck(path: path)
    if !check.report.isEmpty { print(check.report) }
    for problem in check.problems { StandardError.write(problem + "\n") }
    exit(check.status.rawValue)
case .transcode(let input, let output, let options):
    transcode(input: input, output: output, options: options)
}
