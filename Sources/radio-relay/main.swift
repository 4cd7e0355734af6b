import Glibc
import RadioRelay
import RadioRelaySystem

/// The executable: parse (in the library, unit-tested), run what was asked, and exit with its sysexits status.
let command: Command
do {
    command = try Command.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    StandardError.write("radio-relay: \(error.message)\n\(error.hint)\n")
    // `status` exits as a monitoring plugin does: 3 (UNKNOWN) for a usage error.
    exit(error.topic == .status ? StatusCommand.Verdict.unknown.rawValue : ExitCode.usage.rawValue)
}

switch command {
case .help(let topic):
    print(topic.text)
case .version:
    print("radio-relay \(RadioRelayVersion.string) (\(RadioRelayVersion.libraries))")
case .serve(let options):
    if let warning = options.secretsWarning { Log.warning(warning) }
    exit(Server.serve({ try options.configuration() }).rawValue)
case .serveConfig(let path, let logLevel):
    let load = { try ServerConfiguration.load(path: path) }
    exit(Server.serve(load, reload: load, logLevelOverride: logLevel).rawValue)
case .status(let status):
    exit(status.run())
case .report(let report):
    exit(report.run())
case .checkConfig(let path):
    let check = ConfigCheck(path: path)
    if !check.report.isEmpty { print(check.report) }
    for problem in check.problems { StandardError.write(problem + "\n") }
    exit(check.status.rawValue)
case .transcode(let input, let output, let options):
    exit(Transcoder.runCommand(input: input, output: output, options: options).rawValue)
}
