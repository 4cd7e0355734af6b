import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `--config FILE` and `check-config FILE` on the command line, then with the real binary: exit statuses 0 and 78,
/// and two stations from one file served by one process.
@Suite struct ConfigFileCommandTests {
    @Test(
        arguments: [
            (["--config", "r.conf"], "r.conf", nil), (["--config=r.conf", "--log-level", "debug"], "r.conf", .debug),
            (["serve", "--config", "/etc/r.conf"], "/etc/r.conf", nil),
            (["serve", "--log-level=warning", "--config", "x"], "x", .warning),
        ] as [([String], String, Log.Priority?)])
    func config(arguments: [String], path: String, logLevel: Log.Priority?) throws {
        guard case .serveConfig(let parsedPath, let parsedLevel) = try Command.parse(arguments) else {
            Issue.record("not serveConfig: \(arguments)")
            return
        }
        #expect(parsedPath == path && parsedLevel == logLevel)
    }

    @Test func checkConfig() throws {
        guard case .checkConfig(let path) = try Command.parse(["check-config", "r.conf"]) else {
            Issue.record("not checkConfig")
            return
        }
        #expect(path == "r.conf")
        guard case .help(.checkConfig) = try Command.parse(["check-config", "--help"]),
            case .help(.checkConfig) = try Command.parse(["help", "check-config"])
        else {
            Issue.record("no check-config help")
            return
        }
    }

    @Test(
        arguments: [
            (
                ["serve", "--config", "r.conf", "--port", "9000"],
                "--config cannot be combined with --port: set it in the config file", HelpTopic.serve
            ),
            (
                ["serve", "--name=x", "--config", "r.conf"],
                "--config cannot be combined with --name: set it in the config file", .serve
            ),
            (["--config"], "--config needs a value: a config file's path", .overall),
            (
                ["--config", "r.conf", "--port", "1"],
                "--config cannot be combined with --port: set it in the config file", .overall
            ),
            (["--config", "r.conf", "extra"], "unknown command extra", .overall),
            (["check-config"], "check-config needs 1 argument, FILE; got 0", .checkConfig),
            (["check-config", "a", "b"], "check-config needs 1 argument, FILE; got 2", .checkConfig),
            (["check-config", "--port", "1", "a"], "unknown option --port", .checkConfig),
            (["serve", "--reconnect-max", "0.5"], "--reconnect-max 0.5: use 1 to 3600 seconds", .serve),
        ] as [([String], String, HelpTopic)])
    func usageError(arguments: [String], message: String, topic: HelpTopic) {
        #expect(throws: UsageError(message, topic: topic)) { try Command.parse(arguments) }
    }

    @Test func helpTexts() {
        for topic in HelpTopic.allCases {
            #expect(topic.text.split(separator: "\n").allSatisfy { $0.count <= 120 }, "\(topic)")
        }
        #expect(HelpTopic.overall.text.contains("--config FILE") && HelpTopic.overall.text.contains("check-config"))
        #expect(HelpTopic.serve.text.contains("--config FILE") && HelpTopic.serve.text.contains("--reconnect-max"))
        let check = HelpTopic.checkConfig.text
        #expect(check.hasPrefix("usage: radio-relay check-config FILE"))
        for option in OptionSpecification.stationSettings { #expect(check.contains(option.key)) }
        #expect(UsageError("x", topic: .checkConfig).hint == "try `radio-relay check-config --help`")
    }
}
