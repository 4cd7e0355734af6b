import Foundation
import RadioRelay

/// The executable parses arguments and wires library parts together; nothing here is worth a unit test.

let usage = """
    radio-relay \(RadioRelayVersion.string): relays an MP3 stream as Ogg Opus.

    usage:
      radio-relay                         transcode the bundled demo sample to ./demo.opus
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

let all = CommandLine.arguments
switch all.dropFirst().first {
case nil:
    guard let sample = BundledSample.path else { fail("the bundled demo sample is missing from this build") }
    transcode(input: sample, output: "demo.opus", options: Transcoder.Options())
case "--version":
    print("radio-relay \(RadioRelayVersion.string) (\(Encoder.vendor))")
case "--help", "-h", "help":
    print(usage)
case "transcode":
    let arguments = Arguments(all.dropFirst(2), known: ["bitrate", "rate", "complexity", "page-ms"])
    guard arguments.positional.count == 2 else { fail("transcode needs INPUT and OUTPUT\n\n\(usage)", code: 2) }
    transcode(input: arguments.positional[0], output: arguments.positional[1], options: transcodeOptions(arguments))
case let other?:
    fail("unknown command \(other)\n\n\(usage)", code: 2)
}
