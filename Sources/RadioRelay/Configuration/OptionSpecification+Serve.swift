import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `serve`'s options: each station setting says how it reads its text (with `Values`, so that the command line and
/// the config file accept the same values and word their errors alike) and where it stores the value.
extension OptionSpecification {
    /// `serve`'s options, in the order its help lists them.
    static let serve: [OptionSpecification] =
        [
            .init(
                name: "upstream", placeholder: "URL",
                summary: "http(s) Icecast/SHOUTcast MP3 stream or a file; repeat it for backups (default: demo)",
                accepts: "an http(s) URL, a file: URL or a path",
                setting: station({ $0 }, { $0.upstreams.append($1) }, compared: \.inputList), acceptsCredential: true,
                isRepeatable: true,
                reload: .inPlaceWithinKind,
                input: { settings, input in input.upstream = settings.upstreams.last ?? input.upstream }),
            port,
            bind,
            .init(
                name: "bitrate", placeholder: "B", summary: "Opus bitrate (default 96k)",
                accepts: "\(Values.kilo(EncoderConfiguration.bitrateRange)), e.g. 96k or 96000",
                setting: station(Values.bitrate, \.encoder.bitrate), reload: .inPlace),
            .init(
                name: "channels", placeholder: "N", summary: "Opus channels: 2 (default) or 1 (mono, (L+R)/2)",
                accepts: "1 or 2",
                setting: station(Values.integer(EncoderConfiguration.channelsRange), \.encoder.channels),
                reload: .restartsStation),
            .init(
                name: "page-ms", placeholder: "MS",
                summary: "Ogg page duration: 10, or a multiple of 20 (default 100; 10 for low latency)",
                accepts:
                    "10 (10 ms Opus frames), or a multiple of 20 from \(Values.text(EncoderConfiguration.pageDurationRange, joiner: " to "))",
                setting: station(Values.pageDuration, \.encoder.pageDuration), reload: .restartsStation),
            .init(
                name: "latency", placeholder: "normal|low",
                summary: "low: Opus's restricted low-delay mode, 4 ms sooner (a new stream; default normal)",
                accepts: "normal or low", setting: station(Values.latency, \.encoder.lowDelay), reload: .restartsStation
            ),
            .init(
                name: "flush-ms", placeholder: "MS",
                summary: "how often each listener is written to: auto (default) or MS (0 = every page)",
                accepts: "auto or \(Values.text(BroadcasterConfiguration.flushMillisecondsRange))",
                setting: station(Values.flush, \.broadcaster.flush.fixed), reload: .inPlace),
            .init(
                name: "flush-hold-ms", placeholder: "MS",
                summary: "the longest interval flush-ms auto chooses (default 300)",
                accepts: Values.text(BroadcasterConfiguration.flushMillisecondsRange),
                setting: station(
                    Values.integer(BroadcasterConfiguration.flushMillisecondsRange),
                    { $0.broadcaster.flush.hold = Double($1) / 1000 }, compared: \.broadcaster.flush.hold),
                reload: .inPlace),
            .init(
                name: "burst", placeholder: "SECONDS", summary: "audio sent at once to a new listener (default 2)",
                accepts: "\(Values.text(BroadcasterConfiguration.burstRange)) seconds",
                setting: station(Values.seconds(BroadcasterConfiguration.burstRange), \.broadcaster.burst),
                reload: .inPlaceWithinRing),
            .init(
                name: "max-lag", placeholder: "SECONDS",
                summary: "how far behind a listener may fall before it is moved, then dropped (default 10)",
                accepts: "\(Values.text(BroadcasterConfiguration.maxLagRange)) seconds",
                setting: station(Values.seconds(BroadcasterConfiguration.maxLagRange), \.broadcaster.maxLag),
                reload: .inPlaceWithinRing),
            .init(
                name: "max-lead", placeholder: "SECONDS",
                summary: "how far audio may run ahead of real time; a faster upstream is held or trimmed (default 1)",
                accepts: "\(Values.text(StationConfiguration.maxLeadRange)) seconds",
                setting: station(Values.seconds(StationConfiguration.maxLeadRange), \.maxLead), reload: .inPlace),
            .init(
                name: "max-listeners", placeholder: "N", summary: "listeners per station (default 20000; 0 = no limit)",
                accepts: Values.text(BroadcasterConfiguration.listenerLimitRange),
                setting: station(
                    Values.integer(BroadcasterConfiguration.listenerLimitRange), \.broadcaster.maxListeners),
                isServerDefault: true, reload: .inPlace),
            .init(
                name: "max-per-ip", placeholder: "N", summary: "listeners per client address (default 0 = no limit)",
                accepts: Values.text(BroadcasterConfiguration.listenerLimitRange),
                setting: station(
                    Values.integer(BroadcasterConfiguration.listenerLimitRange), \.broadcaster.maxPerIP),
                isServerDefault: true, reload: .inPlace),
            .init(
                name: "proxy-protocol", placeholder: "yes|no",
                summary: "each connection (and --http's) starts with a balancer's PROXY header (default no)",
                accepts: "yes or no", setting: station(Values.yesNo, \.broadcaster.proxyProtocol),
                reload: .inPlace),
            .init(
                name: "proxy-from", placeholder: "ADDRS",
                summary: "balancers whose PROXY header is believed: ADDR[/BITS], … (default 127.0.0.0/8, ::1)",
                accepts: TrustedProxies.accepts,
                setting: station(TrustedProxies.init(parsing:), \.broadcaster.proxyFrom), isServerDefault: true,
                reload: .inPlace),
            .init(
                name: "complexity", placeholder: "N", summary: "libopus complexity (default 10)",
                accepts: Values.text(EncoderConfiguration.complexityRange),
                setting: station(Values.integer(EncoderConfiguration.complexityRange), \.encoder.complexity),
                reload: .inPlace),
            .init(
                name: "pace", placeholder: "auto|yes|no",
                summary: "read the upstream at real time, nothing dropped (auto: files and responses with a length)",
                accepts: "auto, yes or no", setting: station(Values.pace, \.paced), reload: .inPlace,
                input: { settings, input in input.paced = settings.paced }),
            .init(
                name: "reconnect-max", placeholder: "SECONDS",
                summary: "longest wait between upstream reconnects; the waits grow from 1 s up to it (default 30)",
                accepts: "\(Values.text(StationConfiguration.reconnectMaxRange)) seconds",
                setting: station(
                    Values.seconds(StationConfiguration.reconnectMaxRange), Self.setReconnectMax,
                    compared: \.reconnectDelay),
                reload: .inPlace),
            .init(
                name: "connect-timeout", placeholder: "SECONDS",
                summary: "the longest an upstream connection may take (default 10)",
                accepts: "\(Values.text(StationConfiguration.timeoutRange)) seconds",
                setting: station(Values.integer(StationConfiguration.timeoutRange), \.connectTimeout),
                reload: .inPlace, input: { settings, input in input.connectTimeout = settings.connectTimeout }),
            .init(
                name: "stall-timeout", placeholder: "SECONDS",
                summary: "seconds without a byte before an upstream counts as failed (default 10)",
                accepts: "\(Values.text(StationConfiguration.timeoutRange)) seconds",
                setting: station(Values.integer(StationConfiguration.timeoutRange), \.stallTimeout),
                reload: .inPlace, input: { settings, input in input.stallTimeout = settings.stallTimeout }),
            .init(
                name: "peer-timeout", placeholder: "SECONDS",
                summary: "seconds any connection may go on with a peer that stopped answering (default 20)",
                accepts: "\(Values.text(StationConfiguration.timeoutRange)) seconds",
                setting: station(Values.integer(StationConfiguration.timeoutRange), \.peerTimeout),
                reload: .inPlace),
            .init(
                name: "standby", placeholder: "hot|cold",
                summary: "hot: the next input stays connected and decoding; cold: connected when needed (default)",
                accepts: "hot or cold", setting: station(Values.standby, \.failover.hotStandby),
                reload: .inPlace),
            .init(
                name: "dead-air", placeholder: "SECONDS",
                summary: "an input silent this long counts as failed (default 0 = off)",
                accepts: "\(Values.text(FailoverSettings.deadAirRange)) seconds",
                setting: station(Values.seconds(FailoverSettings.deadAirRange), \.failover.deadAir),
                reload: .inPlace),
            .init(
                name: "dead-air-level", placeholder: "DBFS",
                summary: "what counts as silence for dead-air (default -50)",
                accepts: "\(Values.text(FailoverSettings.deadAirLevelRange)) dBFS",
                setting: station(Values.decibels(FailoverSettings.deadAirLevelRange), \.failover.deadAirLevel),
                reload: .inPlace),
            .init(
                name: "recover", placeholder: "SECONDS",
                summary: "seconds a higher input must be healthy before it plays again (default 10)",
                accepts: "\(Values.text(FailoverSettings.recoverRange)) seconds",
                setting: station(Values.seconds(FailoverSettings.recoverRange), \.failover.recover),
                reload: .inPlace),
            .init(
                name: "crossfade", placeholder: "SECONDS",
                summary: "crossfade between inputs at a switch (default 0.5)",
                accepts: "\(Values.text(FailoverSettings.crossfadeRange)) seconds",
                setting: station(Values.seconds(FailoverSettings.crossfadeRange), \.failover.crossfade),
                reload: .inPlace),
            .init(
                name: "loudness", placeholder: "LUFS|off",
                summary: "bring every decoded input to this loudness (EBU R128), gain moved slowly (default off)",
                accepts: "off, or \(Values.text(StationConfiguration.loudnessRange)) LUFS",
                setting: station(Values.loudness(StationConfiguration.loudnessRange), \.loudness), reload: .inPlace),
            .init(
                name: "true-peak", placeholder: "DBTP|off",
                summary: "limit the audio before the encoders to this true peak (default -1.0)",
                accepts: "off, or \(Values.text(StationConfiguration.truePeakRange)) dBTP",
                setting: station(Values.truePeak(StationConfiguration.truePeakRange), \.truePeak), reload: .inPlace),
            .init(
                name: "source-password", placeholder: "PASSWORD",
                summary: "take live sources (user source) on the HTTP address, over every other input",
                accepts: SourcePassword.accepts,
                setting: station(SourcePassword.init, \.sourcePassword), acceptsCredential: true,
                reload: .inPlace, quoted: { _ in "***" }),
            .init(
                name: "source-timeout", placeholder: "SECONDS",
                summary: "seconds without a byte before a live source is gone (default 10)",
                accepts: "\(Values.text(StationConfiguration.timeoutRange)) seconds",
                setting: station(Values.integer(StationConfiguration.timeoutRange), \.sourceTimeout),
                reload: .inPlace),
            .init(
                name: "title", placeholder: "TEXT",
                summary: "the title shown while an input without titles of its own plays",
                accepts: "one line of 1 to 256 printable characters", setting: station(Values.line, \.title),
                reload: .inPlace, input: { settings, input in input.title = settings.title }),
            .init(
                name: "chain-titles", placeholder: "yes|no",
                summary: "start a chained Ogg link at each new ICY title (default no: players mishandle chaining)",
                accepts: "yes or no", setting: station(Values.yesNo, \.chainTitles), reload: .inPlace),
            .init(
                name: "hls", placeholder: "yes|no",
                summary: "a live HLS stream per output at /NAME/live.m3u8 on the HTTP address (default yes)",
                accepts: "yes or no", setting: station(Values.yesNo, \.hls), reload: .restartsStation),
            .init(
                name: "mp3", placeholder: "yes|no",
                summary: "pass the MP3 upstream's own frames through at /NAME.mp3, titles in band (default no)",
                accepts: "yes or no", setting: station(Values.yesNo, \.mp3), reload: .restartsStation),
            .init(
                name: "mp3-port", placeholder: "PORT",
                summary: "raw TCP port of the MP3 pass-through (default 0: any free port; listeners use /NAME.mp3)",
                accepts: "0 to 65535", setting: station(Values.integer(Port.rangeOrAnyFree), \.mp3Port),
                reload: .restartsStation),
            .init(
                name: "hls-segment", placeholder: "SECONDS", summary: "the longest HLS segment (default 2)",
                accepts: "\(Values.text(HLSSegmenter.Settings.segmentRange)) seconds",
                setting: station(
                    Values.seconds(HLSSegmenter.Settings.segmentRange), \.hlsSettings.segmentSeconds),
                reload: .restartsStation),
            .init(
                name: "hls-window", placeholder: "N", summary: "segments in the HLS playlist (default 6)",
                accepts: Values.text(HLSSegmenter.Settings.windowRange),
                setting: station(Values.integer(HLSSegmenter.Settings.windowRange), \.hlsSettings.window),
                reload: .restartsStation),
            .init(
                name: "mount", placeholder: "PATH", summary: "HTTP mount path (default NAME.opus)",
                accepts: StationNames.mountRule,
                setting: station(Values.mount, { $0.mount = $1 }, compared: \.customMount),
                reload: .restartsStation
            ),
            .init(
                name: "display-name", placeholder: "TEXT", summary: "station name for HTTP listeners (icy-name)",
                accepts: "one line of 1 to 256 printable characters",
                setting: station(Values.line, \.info.displayName), reload: .inPlace),
            .init(
                name: "description", placeholder: "TEXT", summary: "station description (icy-description)",
                accepts: "one line of 1 to 256 printable characters",
                setting: station(Values.line, \.info.description), reload: .inPlace),
            .init(
                name: "genre", placeholder: "TEXT", summary: "genre (icy-genre)",
                accepts: "one line of 1 to 256 printable characters", setting: station(Values.line, \.info.genre),
                reload: .inPlace),
            .init(
                name: "url", placeholder: "URL", summary: "the station's web site (icy-url)",
                accepts: "one line of 1 to 256 printable characters", setting: station(Values.line, \.info.url),
                reload: .inPlace),
        ] + listenerRules + authOptions + archiveOptions + [
            rendition,
            .init(
                name: "push", placeholder: "URL",
                summary: "also send the stream to an Icecast mount as its source (repeatable; default: none)",
                accepts: IcecastTarget.form, setting: Self.push, acceptsCredential: true, isRepeatable: true,
                reload: .inPlace, refusal: Self.pushRefusal),
            .init(
                name: "push-ca", placeholder: "FILE",
                summary: "PEM CA certificates icecasts:// pushes verify the server with (default: the system's)",
                accepts: PushCA.accepts, setting: station(PushCA.path, \.pushCA), reload: .inPlace,
                refusal: PushCA.problem),
            .init(
                name: "name", placeholder: "NAME", summary: "station name in logs and URLs (default main)",
                accepts: "a non-empty name"),
            http,
            status,
            networkThreads,
            accessLog,
            config,
            logLevel,
        ]

    /// `--port P`: the station's listening port (the demo takes it too).
    static let port = OptionSpecification(
        name: "port", placeholder: "P", summary: "listening TCP port, or none: HTTP listeners only (default 8000)",
        accepts: "\(Port.accepts), or none", setting: station(Values.portOrNone, \.broadcaster.rawPort),
        reload: .restartsStation)

    /// `--bind ADDR`: the station's listening address (the demo takes it too).
    static let bind = OptionSpecification(
        name: "bind", placeholder: "ADDR", summary: "listening address (default 0.0.0.0; :: for IPv6)",
        accepts: "an IPv4 or IPv6 address such as 0.0.0.0 or ::",
        setting: station(Values.address, \.broadcaster.bind), reload: .restartsStation)

    /// `--rendition NAME:PORT:BITRATE[:mono]`, repeatable: another output of the same decoded audio on its own port,
    /// with the station's other settings. Not a config key: a config file has `[rendition STATION/NAME]` sections.
    static let rendition = OptionSpecification(
        name: "rendition", placeholder: "N:P:B[:mono]",
        summary: "another output (NAME:PORT:BITRATE) of the one decode, repeatable; e.g. low:8001:32k:mono",
        accepts: "NAME:PORT:BITRATE or NAME:PORT:BITRATE:mono, e.g. low:8001:32k:mono")

    /// One more Icecast target.
    private static let push = station(
        { try? IcecastTarget(parsing: $0) }, { $0.pushes.append($1) }, compared: \.pushes)

    private static func pushRefusal(_ text: String) -> String? {
        do {
            _ = try IcecastTarget(parsing: text)
            return nil
        } catch {
            return error.message
        }
    }

    /// The last reconnect delay; the first stays, lowered only if it would exceed the last.
    private static func setReconnectMax(_ station: inout StationConfiguration, _ seconds: Double) {
        station.reconnectDelay = min(station.reconnectDelay.lowerBound, seconds)...seconds
    }
}
