import Foundation
import RadioRelay

/// The executable parses arguments and wires library parts together; nothing here is worth a unit test.

let usage = """
    radio-relay \(RadioRelayVersion.string): relays an MP3 stream as Ogg Opus.

    usage:
      radio-relay                         serve the bundled demo sample in a loop on port 8000
      radio-relay serve [options]         relay one station (listeners: ffplay tcp://HOST:PORT)
          --upstream URL      http(s) Icecast/SHOUTcast MP3 stream, or a file (played at real time, looped)
          --port P            listening TCP port (default 8000)
          --bind ADDR         listening address (default 0.0.0.0; :: for IPv6)
          --bitrate B         Opus bitrate (default 96k)
          --page-ms MS        Ogg page duration, multiple of 20 (default 100; 20 for low latency)
          --flush-ms MS       how often each listener is written to (default 300; 0 = every page)
          --burst SECONDS     audio sent at once to a new listener (default 2)
          --max-lag SECONDS   how far behind a listener may fall before it is moved, then dropped (default 10)
          --max-listeners N   listeners per station (default 20000; 0 = no limit)
          --max-per-ip N      listeners per client address (default 0 = no limit)
          --complexity N      libopus complexity 0-10 (default 10)
          --pace auto|yes|no  read the upstream at real time from its packets' durations (auto: files only)
          --name NAME         station name in logs (default main)
      radio-relay transcode INPUT OUTPUT  INPUT: a path or an http(s)/file URL; OUTPUT: a .opus path or - (stdout)
          --bitrate B     Opus bitrate: 96k (default), 128000, …
          --rate HZ       common PCM rate: 48000 (default) or 44100
          --complexity N  libopus complexity 0-10 (default 10)
          --page-ms MS    Ogg page duration, a multiple of 20 (default 100)
      radio-relay --version | --help
    """

func fail(_ message: String, code: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("radio-relay: \(message)\n".utf8))
    exit(code)
}

/// Reads `--flag value` pairs and positional arguments.
struct Arguments {
    var positional: [String] = []
    var flags: [String: String] = [:]

    init(_ arguments: ArraySlice<String>, known: Set<String>) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            if argument.hasPrefix("--") && argument.count > 2 {
                var name = String(argument.dropFirst(2))
                var value: String?
                if let equals = name.firstIndex(of: "=") {
                    value = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard known.contains(name) else { fail("unknown option --\(name)\n\n\(usage)", code: 2) }
                guard let given = value ?? iterator.next() else { fail("--\(name) needs a value", code: 2) }
                flags[name] = given
            } else {
                positional.append(argument)
            }
        }
    }
}

func transcodeOptions(_ arguments: Arguments) -> Transcoder.Options {
    var options = Transcoder.Options()
    if let text = arguments.flags["bitrate"] {
        guard let bitrate = Units.bitrate(text) else { fail("--bitrate \(text): expected e.g. 96k or 96000", code: 2) }
        options.encoder.bitrate = bitrate
    }
    if let text = arguments.flags["rate"] {
        guard let rate = Units.integer(text, in: 1...1_000_000), Reader.supportedCommonRates.contains(rate)
        else { fail("--rate \(text): use 48000 or 44100", code: 2) }
        options.commonRate = rate
    }
    if let text = arguments.flags["complexity"] {
        guard let complexity = Units.integer(text, in: 0...10) else { fail("--complexity \(text): use 0 to 10", code: 2) }
        options.encoder.complexity = complexity
    }
    if let text = arguments.flags["page-ms"] {
        guard let ms = Units.integer(text, in: 20...1000), ms % 20 == 0
        else { fail("--page-ms \(text): use a multiple of 20 from 20 to 1000", code: 2) }
        options.encoder.pageDuration = ms
    }
    do { try options.encoder.validate() } catch { fail("\(error)", code: 2) }
    return options
}

func transcode(input: String, output: String, options: Transcoder.Options) {
    let interactive = isatty(STDERR_FILENO) == 1
    var lastShown = Date.distantPast
    let started = Date()
    do {
        let summary = try Transcoder(options: options).run(input: input, output: output) { progress in
            guard interactive, Date().timeIntervalSince(lastShown) > 0.2 else { return }
            lastShown = Date()
            let line = String(format: "\r%8.1f s of audio, %.1f MB read", progress.secondsOut,
                              Double(progress.bytesIn) / 1e6)
            FileHandle.standardError.write(Data(line.utf8))
        }
        if interactive { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        let elapsed = Date().timeIntervalSince(started)
        let format = summary.format.map { "\($0)" } ?? "?"
        var line = String(format: "%@ → %@: %.3f s of Opus (%d pages, %lld bytes) from %@ in %.2f s",
                          input, output, summary.secondsOut, summary.pages, summary.bytesOut, format, elapsed)
        if summary.parser.bytesSkipped > 0 || summary.reader.decodeErrors > 0 {
            line += "; skipped \(summary.parser.bytesSkipped) bytes of non-audio"
            if summary.parser.syncLosses > 0 { line += ", lost sync \(summary.parser.syncLosses)×" }
            if summary.reader.decodeErrors > 0 { line += ", \(summary.reader.decodeErrors) undecodable frames" }
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    } catch {
        if interactive { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        fail("\(error)")
    }
}

func stationConfiguration(_ arguments: Arguments) -> StationConfiguration {
    var station = StationConfiguration()
    func number(_ flag: String, _ range: ClosedRange<Int>) -> Int? {
        guard let text = arguments.flags[flag] else { return nil }
        guard let value = Units.integer(text, in: range) else { fail("--\(flag) \(text): use \(range.lowerBound) to \(range.upperBound)", code: 2) }
        return value
    }
    func seconds(_ flag: String, _ range: ClosedRange<Double>) -> Double? {
        guard let text = arguments.flags[flag] else { return nil }
        guard let value = Units.seconds(text, in: range) else { fail("--\(flag) \(text): seconds from \(range.lowerBound) to \(range.upperBound)", code: 2) }
        return value
    }
    if let upstream = arguments.flags["upstream"] {
        station.upstream = upstream
    } else {
        guard let sample = BundledSample.path else { fail("no --upstream, and the bundled demo sample is missing") }
        station.upstream = sample
    }
    if let name = arguments.flags["name"] { station.name = name }
    switch arguments.flags["pace"] {
    case nil, "auto": station.paced = nil
    case "yes": station.paced = true
    case "no": station.paced = false
    case let other?: fail("--pace \(other): use auto, yes or no", code: 2)
    }
    if let bind = arguments.flags["bind"] { station.broadcaster.bind = bind }
    if let port = number("port", 1...65535) { station.broadcaster.port = port }
    if let text = arguments.flags["bitrate"] {
        guard let bitrate = Units.bitrate(text) else { fail("--bitrate \(text): expected e.g. 96k or 96000", code: 2) }
        station.encoder.bitrate = bitrate
    }
    if let ms = number("page-ms", 20...1000) { station.encoder.pageDuration = ms }
    if let ms = number("flush-ms", 0...2000) { station.broadcaster.flushInterval = Double(ms) / 1000 }
    if let complexity = number("complexity", 0...10) { station.encoder.complexity = complexity }
    if let burst = seconds("burst", 0...60) { station.broadcaster.burst = burst }
    if let lag = seconds("max-lag", 0.5...600) { station.broadcaster.maxLag = lag }
    if let n = number("max-listeners", 0...1_000_000) { station.broadcaster.maxListeners = n }
    if let n = number("max-per-ip", 0...1_000_000) { station.broadcaster.maxPerIP = n }
    do { try station.validate() } catch { fail("\(error)", code: 2) }
    return station
}

func serve(_ configuration: StationConfiguration) -> Never {
    Server.blockSignals()
    do {
        let station = try Station(configuration)
        Log.notice("radio-relay \(RadioRelayVersion.string): station \(configuration.name) relays \(configuration.upstream) "
                   + "on \(station.broadcaster.address) (listen: ffplay tcp://HOST:\(station.broadcaster.address.port))")
        try Server(stations: [station]).run()
        exit(0)
    } catch {
        fail("\(error)")
    }
}

let serveFlags: Set<String> = ["upstream", "port", "bind", "bitrate", "page-ms", "flush-ms", "burst", "max-lag",
                               "max-listeners", "max-per-ip", "complexity", "name", "pace"]
let all = CommandLine.arguments
switch all.dropFirst().first {
case nil:
    serve(stationConfiguration(Arguments([], known: serveFlags)))
case "serve":
    let arguments = Arguments(all.dropFirst(2), known: serveFlags)
    guard arguments.positional.isEmpty else { fail("serve takes only options\n\n\(usage)", code: 2) }
    serve(stationConfiguration(arguments))
case "--version":
    print("radio-relay \(RadioRelayVersion.string) (\(RadioRelayVersion.libraries))")
case "--help", "-h", "help":
    print(usage)
case "transcode":
    let arguments = Arguments(all.dropFirst(2), known: ["bitrate", "rate", "complexity", "page-ms"])
    guard arguments.positional.count == 2 else { fail("transcode needs INPUT and OUTPUT\n\n\(usage)", code: 2) }
    transcode(input: arguments.positional[0], output: arguments.positional[1], options: transcodeOptions(arguments))
case let other?:
    fail("unknown command \(other)\n\n\(usage)", code: 2)
}
