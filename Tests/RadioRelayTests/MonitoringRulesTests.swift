import Foundation
import RadioRelayTestSupport
import Testing

/// The alert rules the package ships (`deploy/prometheus/`) pass Prometheus's own checks: `promtool check rules`
/// (syntax, templates) and `promtool test rules` (each alert fires on the synthetic series that should raise it,
/// and only on those).
@Suite(.enabled(if: tool("promtool") != nil, "needs promtool (prometheus; .ci/deps --test)"))
struct MonitoringRulesTests {
    static let directory = Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("deploy/prometheus").path

    @Test func promtoolChecksAndTestsTheRules() throws {
        let promtool = try #require(tool("promtool"))
        let check = try run(promtool, ["check", "rules", Self.directory + "/radio-relay-rules.yml"])
        #expect(check.status == 0 && check.stdout.contains("SUCCESS: 11 rules found"), "\(check.stdout)\(check.stderr)")
        let test = try run(promtool, ["test", "rules", Self.directory + "/radio-relay-rules.test.yml"])
        #expect(test.status == 0 && test.stdout.contains("SUCCESS"), "\(test.stdout)\(test.stderr)")
    }
}
