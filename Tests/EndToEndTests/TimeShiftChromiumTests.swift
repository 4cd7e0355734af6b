import Foundation
import RadioRelay
import RadioRelayTestSupport
import Testing

/// Chromium's `<audio>` plays a mount from its archive (`?offset=`): the browser takes the time-shifted Ogg Opus
/// stream as it takes the live one, plays 10 s of it without an error, and the station counts it as a time-shifted
/// listener while it plays. (In the `PeerTests` lane: Chromium is a heavy peer.)
extension PeerTests {
    @Suite(.timeLimit(.minutes(2))) struct TimeShiftChromiumTests {
        @Test(.enabled(if: tool("chromium") != nil, "needs chromium (Debian: chromium; `.ci/deps --test`)"))
        func chromiumPlaysFromTheArchive() throws {
            let directory = temporaryPath("shift-chromium")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let rig = try ServedStation(["--archive", directory, "--archive-span", "10"])
            defer { rig.stop() }
            #expect(rig.archiveHolds(14, within: 40), "\(rig.server.log)")
            var station = StationStatus(name: "")
            let json = try HTTPPlayerTests.playInChromium("http://127.0.0.1:\(rig.http)/test.opus?offset=12") {
                station = try rig.station()
            }
            let advanced = try #require(json["advanced"] as? Double)
            let errors = try #require(json["errors"] as? [Any])
            #expect(errors.isEmpty, "\(errors)")
            #expect(advanced >= 8, "currentTime advanced \(advanced) s")
            #expect(json["paused"] as? Bool == false)
            #expect(station.archive?.timeShifted == 1, "\(String(describing: station.archive))")
        }
    }
}
