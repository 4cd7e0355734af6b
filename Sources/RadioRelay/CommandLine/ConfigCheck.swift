import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What `radio-relay check-config FILE` reports: the file read exactly as `--config FILE` reads it, nothing run.
package struct ConfigCheck: Sendable, Equatable {
    /// 0, or 78 (EX_CONFIG) when the file has any problem.
    package let status: ExitCode
    /// For standard output: "FILE: OK, 3 stations (jazz, news, talk)" (and ", 2 DJ accounts (alice, bob)" when it has
    /// any), then a line per warning and note
    /// ("warning: …", "note: …": what start-up would log once), or empty.
    package let report: String
    /// For standard error: every problem, one a line, each naming FILE:LINE.
    package let problems: [String]

    package init(path: String, credentialsDirectory: String? = ServerConfiguration.environmentCredentialsDirectory) {
        do {
            let file = try ServerConfiguration.load(path: path, credentialsDirectory: credentialsDirectory)
            let count = file.stations.count
            let names = file.stations.map(\.name).joined(separator: ", ")
            let djs = file.accounts.count
            let accounts =
                djs == 0
                ? ""
                : ", \(djs) DJ account\(djs == 1 ? "" : "s") (\(file.accounts.map(\.name).joined(separator: ", ")))"
            status = .ok
            report =
                (["\(path): OK, \(count) station\(count == 1 ? "" : "s") (\(names))\(accounts)"]
                + file.warnings.map { "warning: \($0)" } + file.notes.map { "note: \($0)" })
                .joined(separator: "\n")
            problems = []
        } catch {
            status = .config
            report = ""
            problems = error.messages
        }
    }
}
