import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

extension ServerProcessTests {
    /// Every metric the shipped Grafana dashboard (`deploy/grafana/radio-relay.json`) and alert rules
    /// (`deploy/prometheus/radio-relay-rules.yml`) name is one a running relay exports: a scrape of the binary's
    /// `/metrics` (a station with HLS, an MP3 output and a live-source password) has each of them.
    @Suite(.timeLimit(.minutes(1))) struct DashboardMetricsTests {
        static let repository = Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()

        /// `radio_relay_…` names in `text`.
        static func metricNames(_ text: String) -> Set<String> {
            let pattern = try! NSRegularExpression(pattern: "radio_relay_[a-z_]+")
            let range = NSRange(text.startIndex..., in: text)
            return Set(
                pattern.matches(in: text, range: range).compactMap {
                    Range($0.range, in: text).map { String(text[$0]) }
                })
        }

        @Test func everyNameTheDashboardAndTheRulesUseIsExported() throws {
            let dashboardURL = Self.repository.appendingPathComponent("deploy/grafana/radio-relay.json")
            let dashboard = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: dashboardURL)) as? [String: Any])
            let panels = dashboard["panels"] as? [[String: Any]] ?? []
            let expressions = panels.flatMap {
                ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String }
            }
            #expect(panels.count >= 10 && expressions.count >= panels.count)
            let rules = try String(
                contentsOf: Self.repository.appendingPathComponent("deploy/prometheus/radio-relay-rules.yml"),
                encoding: .utf8)
            let wanted = Self.metricNames(expressions.joined(separator: "\n") + "\n" + rules)
                .union(Self.metricNames(String(describing: dashboard["templating"] ?? "")))
            // With an archive and recordings, so that their families (which the rules name) have samples.
            let archive = temporaryPath("dashboard-archive")
            defer { try? FileManager.default.removeItem(atPath: archive) }
            let station = try ServedStation([
                "--mp3", "yes", "--source-password", "hackme-live-1", "--archive", archive,
                "--record-live", archive + "/shows",
            ])
            defer { station.stop() }
            try #require(waitUntil(10) { (try? station.station())?.upstream == .connected })
            let scrape = try httpGet(station.status, "/metrics").text
            let exported = Set(
                scrape.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap {
                    $0.split(whereSeparator: { $0 == "{" || $0 == " " }).first.map(String.init)
                })
            let missing = wanted.subtracting(exported).sorted()
            print("dashboard and rules name \(wanted.count) metrics; a scrape exports \(exported.count) names")
            #expect(missing.isEmpty, "not exported: \(missing)")
        }
    }
}
