import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// What the command line says when it is wrong or asked: every usage error's message and the help it points to, help
/// per command, `--version`, and the exit status for each kind of error.
@Suite struct CommandLineUsageTests {
    static func help(_ arguments: [String]) throws -> HelpTopic? {
        guard case .help(let topic) = try Command.parse(arguments) else { return nil }
        return topic
    }

    // MARK: - Usage errors

    /// Each wrong command line: the one-line message, naming the flag and what it accepts, and the help it points to.
    @Test(
        arguments: [
            (["frob"], "unknown command frob: use serve, transcode, check-config, status or report", HelpTopic.overall),
            (["--bitrate", "64k"], "unknown option --bitrate", .overall),
            (["--log-level", "loud"], "--log-level loud: use error, warning, notice, info or debug", .overall),
            (["--log-level"], "--log-level needs a value: error, warning, notice, info or debug", .overall),
            (["--version", "x"], "--version takes no arguments", .overall),
            (["help", "frob"], "no help for frob: use serve, transcode, check-config, status or report", .overall),
            (["-x"], "unknown option -x", .overall),
            (["serve", "--bogus", "1"], "unknown option --bogus", .serve),
            (["serve", "--rate=44100"], "unknown option --rate", .serve),
            (["serve", "extra"], "serve takes only options, not extra", .serve),
            (["serve", "--upstream"], "--upstream needs a value: an http(s) URL, a file: URL or a path", .serve),
            (["serve", "--name="], "--name needs a value: a non-empty name", .serve),
            (["serve", "--port", "0"], "--port 0: use 1 to 65535, or none", .serve),
            (["serve", "--port=65536"], "--port 65536: use 1 to 65535, or none", .serve),
            (["serve", "--port", "eighty"], "--port eighty: use 1 to 65535, or none", .serve),
            (
                ["serve", "--bind", "localhost"], "--bind localhost: use an IPv4 or IPv6 address such as 0.0.0.0 or ::",
                .serve
            ),
            (["serve", "--bitrate", "5k"], "--bitrate 5k: use 6k to 510k, e.g. 96k or 96000", .serve),
            (["serve", "--bitrate", "fast"], "--bitrate fast: use 6k to 510k, e.g. 96k or 96000", .serve),
            (
                ["serve", "--page-ms", "30"],
                "--page-ms 30: use 10 (10 ms Opus frames), or a multiple of 20 from 20 to 1000", .serve
            ),
            (
                ["serve", "--page-ms", "1020"],
                "--page-ms 1020: use 10 (10 ms Opus frames), or a multiple of 20 from 20 to 1000", .serve
            ),
            (["serve", "--flush-ms", "2001"], "--flush-ms 2001: use auto or 0 to 2000", .serve),
            (["serve", "--flush-ms", "fast"], "--flush-ms fast: use auto or 0 to 2000", .serve),
            (["serve", "--flush-hold-ms", "-1"], "--flush-hold-ms -1: use 0 to 2000", .serve),
            (["serve", "--network-threads", "0"], "--network-threads 0: use auto or 1 to 64", .serve),
            (["serve", "--network-threads", "65"], "--network-threads 65: use auto or 1 to 64", .serve),
            (["serve", "--burst", "61"], "--burst 61: use 0 to 60 seconds", .serve),
            (["serve", "--burst", "inf"], "--burst inf: use 0 to 60 seconds", .serve),
            (["serve", "--max-lag", "0.4"], "--max-lag 0.4: use 0.5 to 600 seconds", .serve),
            (["serve", "--max-lag", "nan"], "--max-lag nan: use 0.5 to 600 seconds", .serve),
            (["serve", "--max-lead", "0.1"], "--max-lead 0.1: use 0.2 to 30 seconds", .serve),
            (["serve", "--max-listeners", "-1"], "--max-listeners -1: use 0 to 1000000", .serve),
            (["serve", "--max-per-ip", "1000001"], "--max-per-ip 1000001: use 0 to 1000000", .serve),
            (["serve", "--complexity", "11"], "--complexity 11: use 0 to 10", .serve),
            (["serve", "--pace", "maybe"], "--pace maybe: use auto, yes or no", .serve),
            (
                ["serve", "--push", "icecast://source:secret@host"],
                "--push icecast://***@host: the URL has no mount: add one, as in "
                    + "icecast://source:PASSWORD@HOST:PORT/MOUNT", .serve
            ),
            (
                ["serve", "--push", "http://source:secret@host/a"],
                "--push http://***@host/a: not an icecast:// or icecasts:// (TLS) URL: write "
                    + "icecast://source:PASSWORD@HOST:PORT/MOUNT", .serve
            ),
            (
                ["serve", "--push", "icecast://u:p@a/x.opus", "--push", "icecast://v:q@A:8000/x.opus"],
                "station main: pushes twice to icecast://***@A:8000/x.opus: Icecast takes one source per mount",
                .serve
            ),
            (
                ["serve", "--log-level", "trace"], "--log-level trace: use error, warning, notice, info or debug",
                .serve
            ),
            (["transcode"], "transcode needs 2 arguments, INPUT and OUTPUT; got 0", .transcode),
            (["transcode", "a", "b", "c"], "transcode needs 2 arguments, INPUT and OUTPUT; got 3", .transcode),
            (["transcode", "a", "b", "--upstream", "x"], "unknown option --upstream", .transcode),
            (
                ["transcode", "a", "b", "--bitrate", "600k"], "--bitrate 600k: use 6k to 510k, e.g. 96k or 96000",
                .transcode
            ),
            (["transcode", "a", "b", "--rate", "22050"], "--rate 22050: use 48000 or 44100", .transcode),
            (["transcode", "a", "b", "--complexity=-1"], "--complexity -1: use 0 to 10", .transcode),
            (
                ["transcode", "a", "b", "--page-ms", "30"], "--page-ms 30: use a multiple of 20 from 20 to 1000",
                .transcode
            ),
            (
                ["transcode", "a", "b", "--page-ms"], "--page-ms needs a value: a multiple of 20 from 20 to 1000",
                .transcode
            ),
            (["report"], "report needs at least 1 ACCESS_LOG (a path, or - for standard input)", .report),
            (["report", "--csv", "--json", "a"], "--csv and --json: choose one", .report),
            (["report", "--min-seconds", "-1", "a"], "--min-seconds -1: use 0 to 86400", .report),
            (["report", "--min-seconds", "86401", "a"], "--min-seconds 86401: use 0 to 86400", .report),
            (["report", "--bitrate", "64k", "a"], "unknown option --bitrate", .report),
            (
                ["report", "--station-of", "jazz", "a"], "--station-of jazz: use MOUNT=STATION, e.g. /jazz.opus=jazz",
                .report
            ),
            (
                ["report", "--station-of", "jazz.opus=jazz", "a"],
                "--station-of jazz.opus=jazz: the mount is a path, e.g. /jazz.opus or /jazz/ (HLS)", .report
            ),
            (
                ["report", "--station-of", "/jazz.opus=ja zz", "a"],
                "--station-of /jazz.opus=ja zz: the station is 1 to 64 of A-Z a-z 0-9 _ -", .report
            ),
            (
                ["report", "--station-of", "/a=x", "--station-of", "/a=y", "a"], "--station-of /a is given twice",
                .report
            ),
        ] as [([String], String, HelpTopic)])
    func usageError(arguments: [String], message: String, topic: HelpTopic) {
        #expect(throws: UsageError(message, topic: topic)) { try Command.parse(arguments) }
    }

    @Test func theHintNamesTheHelpOfTheCommand() {
        #expect(UsageError("x", topic: .overall).hint == "try `radio-relay --help`")
        #expect(UsageError("x", topic: .serve).hint == "try `radio-relay serve --help`")
        #expect(UsageError("x", topic: .transcode).hint == "try `radio-relay transcode --help`")
    }

    // MARK: - Help and version

    @Test(
        arguments: [
            (["--help"], HelpTopic.overall), (["-h"], .overall), (["help"], .overall),
            (["--log-level", "info", "-h"], .overall),
            (["help", "serve"], .serve), (["serve", "--help"], .serve), (["serve", "-h"], .serve),
            (["serve", "--port", "9000", "--help"], .serve), (["serve", "--help", "--bogus"], .serve),
            (["help", "transcode"], .transcode), (["transcode", "--help"], .transcode),
            (["transcode", "a", "-h"], .transcode),
            (["help", "report"], .report), (["report", "--help"], .report), (["report", "--csv", "a", "-h"], .report),
        ] as [([String], HelpTopic)])
    func help(arguments: [String], topic: HelpTopic) throws {
        #expect(try Self.help(arguments) == topic)
    }

    @Test func eachHelpShowsOnlyItsOwnOptions() {
        let serve = HelpTopic.serve.text
        let transcode = HelpTopic.transcode.text
        for option in OptionSpecification.serve { #expect(serve.contains(option.synopsis)) }
        for option in OptionSpecification.transcode { #expect(transcode.contains(option.synopsis)) }
        #expect(!serve.contains("--rate") && !serve.contains("INPUT"))
        #expect(!transcode.contains("--upstream") && !transcode.contains("--port"))
        #expect(serve.hasPrefix("usage: radio-relay serve"))
        #expect(transcode.hasPrefix("usage: radio-relay transcode"))
        let overall = HelpTopic.overall.text
        #expect(overall.contains("radio-relay serve [options]") && overall.contains("radio-relay transcode"))
        #expect(overall.contains("serve --help") && overall.contains("--log-level"))
        for code in ExitCode.allCases where code != .ok { #expect(overall.contains("\(code.rawValue) ")) }
        for text in [serve, transcode, overall] {
            #expect(text.split(separator: "\n").allSatisfy { $0.count <= 120 })
        }
    }

    @Test func version() throws {
        guard case .version = try Command.parse(["--version"]) else {
            Issue.record("--version is not .version")
            return
        }
    }

    // MARK: - Exit codes

    struct Unplanned: Error {}

    @Test(arguments: [
        (UsageError("x", topic: .serve) as any Error, ExitCode.usage),
        (ConfigurationError("bind address x is not an IPv4 or IPv6 address"), .config),
        (OutputError(path: "/x.opus", message: "cannot create: No such file or directory"), .cantCreate),
        (TranscodeError.notMP3(input: "x", bytes: 1 << 20), .dataError),
        (DownloadError(.file, url: "/x.mp3", "cannot open /x.mp3"), .noInput),
        (DownloadError(.badURL, url: "gopher://x", "unsupported URL scheme"), .noInput),
        (DownloadError(.httpStatus(404), url: "http://x", "the server answered HTTP 404"), .noInput),
        (DownloadError(.httpStatus(503), url: "http://x", "the server answered HTTP 503"), .unavailable),
        (DownloadError(.transfer, url: "http://x", "connection refused"), .unavailable),
        (SystemError("bind 0.0.0.0:8000", errno: EADDRINUSE), .unavailable),
        (SystemError("bind 192.0.2.1:8000", errno: EADDRNOTAVAIL), .unavailable),
        (SystemError("bind 0.0.0.0:80", errno: EACCES), .noPermission),
        (SystemError("eventfd", errno: EMFILE), .osError),
        (Unplanned(), .software),
    ])
    func exitCode(error: any Error, code: ExitCode) {
        #expect(ExitCode(for: error) == code)
    }

    @Test func exitCodesAreTheSysexitsValues() {
        let values = Dictionary(uniqueKeysWithValues: ExitCode.allCases.map { ("\($0)", $0.rawValue) })
        #expect(
            values == [
                "ok": 0, "usage": 64, "dataError": 65, "noInput": 66, "unavailable": 69, "software": 70,
                "osError": 71, "cantCreate": 73, "noPermission": 77, "config": 78,
            ])
    }
}
