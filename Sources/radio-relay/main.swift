import Foundation
import RadioRelay

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

func serve(_ options: ServeOptions) -> Never {
    Log.threshold = options.logLevel
    Server.blockSignals()
    do {
        let configuration = try options.resolvedStation()
        let station = try Station(configuration)
        Log.notice(
            "radio-relay \(RadioRelayVersion.string): station \(configuration.name) relays "
                + "\(configuration.upstream) on \(station.listenAddress) "
                + "(listen: ffplay tcp://HOST:\(station.port))")
        try Server(stations: [station]).run()
        exit(ExitCode.ok.rawValue)
    } catch {
        // Through the log, so that journald records it as an error.
        Log.error("\(error)")
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
    serve(options)
case .transcode(let input, let output, let options):
    transcode(input: input, output: output, options: options)
}
