import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The shipped example config is valid, and the warnings a valid file carries (said at start-up and by check-config):
/// a file input that cannot be read, a status endpoint open beyond loopback without a token.
@Suite struct ConfigFileWarningTests {
    /// The shipped example (`config/radio-relay.conf`) is valid, and reading it connects to nothing.
    @Test func theExampleConfigIsValid() throws {
        let path = Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("config/radio-relay.conf").path
        let file = try ServerConfiguration.load(path: path, credentialsDirectory: nil)
        #expect(file.stations.count >= 2)
        #expect(file.server.status == ListenAddress(host: "127.0.0.1", port: 8080))
        let check = ConfigCheck(path: path, credentialsDirectory: nil)
        #expect(check.status == .ok && check.problems.isEmpty)
        // Its fallback file is a place to put one: where there is none (a test machine), check-config says so.
        let fallback = "/srv/radio/jazz-station-id.mp3"
        let warning =
            access(fallback, R_OK) == 0
            ? []
            : [
                "warning: station jazz: input fallback \(fallback) cannot be read (No such file or directory): it "
                    + "fails when the station needs it"
            ]
        #expect(check.report == (["\(path): OK, 2 stations (jazz, news)"] + warning).joined(separator: "\n"))
        #expect(
            file.stations[0].renditions.map(\.name) == ["low"] && file.stations[0].renditions[0].encoder.channels == 1)
    }

    /// Valid settings that fail an operator later are said at start-up and by check-config: a file input whose file
    /// cannot be read (a fallback noticed only in the emergency), a status endpoint with controls beyond loopback
    /// and no token.
    @Test func warningsForAMissingFileAndAnOpenStatusEndpoint() throws {
        let present = temporaryPath("present.mp3")
        try Data([0xFF]).write(to: URL(fileURLWithPath: present))
        defer { try? FileManager.default.removeItem(atPath: present) }
        let missing = temporaryPath("missing.mp3")
        let open = try ConfigFileTests.parse(
            """
            [server]
            status = 0.0.0.0:8080
            [station a]
            upstream = http://a.example/a.mp3
            [input a/fallback]
            upstream = \(missing)
            [station b]
            port = 8001
            upstream = \(present)
            """)
        #expect(
            open.warnings == [
                "the status endpoint listens on 0.0.0.0:8080 with no status_token: anyone who reaches it can force "
                    + "and release inputs and kill live sources (POST /stations/NAME/…, /admin/killsource); set "
                    + "status_token, or status = 127.0.0.1:8080",
                "station a: input fallback \(missing) cannot be read (No such file or directory): it fails when the "
                    + "station needs it",
            ])
        let closed = try ConfigFileTests.parse(
            """
            [server]
            status = [::1]:8080
            [station b]
            upstream = \(present)
            """)
        #expect(closed.warnings.isEmpty)
        let credentials = try ConfigFileTests.credentials(["token": "0123456789abcdef0123"])
        defer { try? FileManager.default.removeItem(atPath: credentials) }
        let withToken = try ConfigFileTests.parse(
            """
            [server]
            status = 0.0.0.0:8080
            status_token = @credential:token
            [station b]
            upstream = \(present)
            """, credentials: credentials)
        #expect(withToken.warnings.isEmpty)
    }
}
