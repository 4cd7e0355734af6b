import Foundation
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// radio-relay-load: argument parsing and wiring; the loop is `LoadRun`, the checks `OggStreamCheck`, the figures
/// `LoadSummary`.

/// Writes one line to standard error.
func printError(_ line: String) {
    StandardError.write(line + "\n")
}

func fail(_ message: String, code: Int32) -> Never {
    printError("radio-relay-load: \(message)")
    exit(code)
}

let options: LoadOptions
do {
    options = try LoadOptions(arguments: CommandLine.arguments.dropFirst())
} catch {
    if CommandLine.arguments.contains("--help") || CommandLine.arguments.contains("-h") {
        print(LoadOptions.usage)
        exit(0)
    }
    fail("\(error)", code: 2)
}

// Each listener is a file descriptor: raise the soft limit to the hard one.
var limit = rlimit()
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
if limit.rlim_cur < limit.rlim_max {
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
if limit.rlim_cur < rlim_t(options.count + 100) {
    printError(
        "radio-relay-load: error: the open-file limit is \(limit.rlim_cur), below N+100 = \(options.count + 100); "
            + "connections past it will fail (raise the hard limit: ulimit -Hn, LimitNOFILE)")
}

signal(SIGPIPE, SIG_IGN)
let summary: LoadSummary
do {
    let run = try LoadRun(options: options)
    run.run()
    summary = LoadSummary(run)
} catch {
    fail("\(error)", code: 1)
}
print(summary.text)
if let path = options.jsonPath {
    do {
        try summary.json().write(to: URL(fileURLWithPath: path))
    } catch {
        fail("cannot write \(path): \(error)", code: 1)
    }
}
exit(summary.ok ? 0 : 1)
