/// `serve` as parsed: the station and the log level.
package struct ServeOptions: Sendable, Equatable {
    /// The station; an empty `upstream` stands for the bundled demo sample (`resolvedStation`).
    package var station = StationConfiguration()
    /// Log lines less important than this are dropped (`Log.threshold`).
    package var logLevel = Log.Priority.info

    package init() {}

    /// The station to run, with the bundled demo sample where no upstream was given.
    /// - Throws: `ConfigurationError` when the sample is needed and missing from the installation.
    package func resolvedStation(sample: @autoclosure () -> String? = BundledSample.path)
        throws(ConfigurationError) -> StationConfiguration
    {
        var resolved = station
        if resolved.upstream.isEmpty {
            guard let sample = sample() else {
                throw ConfigurationError(
                    "no --upstream, and the bundled demo sample is missing: pass --upstream, or install the "
                        + "radio-relay_RadioRelay.resources folder beside the binary")
            }
            resolved.upstream = sample
        }
        return resolved
    }

    init(_ scanner: ArgumentScanner) throws(UsageError) {
        var station = StationConfiguration()
        if let upstream = scanner.values["upstream"] { station.upstream = upstream }
        if let name = scanner.values["name"] { station.name = name }
        if let paced = try scanner.value("pace", Values.pace) { station.paced = paced }
        if let bind = try scanner.value("bind", Values.address) { station.broadcaster.bind = bind }
        if let port = try scanner.value("port", Values.integer(1...65535)) { station.broadcaster.port = port }
        if let bitrate = try scanner.value("bitrate", Values.bitrate) { station.encoder.bitrate = bitrate }
        if let ms = try scanner.value("page-ms", Values.pageDuration) { station.encoder.pageDuration = ms }
        if let ms = try scanner.value("flush-ms", Values.integer(0...2000)) {
            station.broadcaster.flushInterval = Double(ms) / 1000
        }
        if let complexity = try scanner.value("complexity", Values.integer(0...10)) {
            station.encoder.complexity = complexity
        }
        if let burst = try scanner.value("burst", Values.seconds(0...60)) { station.broadcaster.burst = burst }
        if let lag = try scanner.value("max-lag", Values.seconds(0.5...600)) { station.broadcaster.maxLag = lag }
        if let lead = try scanner.value("max-lead", Values.seconds(0.2...30)) { station.maxLead = lead }
        if let n = try scanner.value("max-listeners", Values.integer(0...1_000_000)) {
            station.broadcaster.maxListeners = n
        }
        if let n = try scanner.value("max-per-ip", Values.integer(0...1_000_000)) { station.broadcaster.maxPerIP = n }
        // The flags are checked one by one above; this catches a rule that spans flags.
        do {
            try station.encoder.validate()
            try station.broadcaster.validate()
        } catch {
            throw scanner.error("\(error)")
        }
        self.station = station
        self.logLevel = try scanner.value("log-level", Log.Priority.init(name:)) ?? .info
    }
}
