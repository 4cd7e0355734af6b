import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// Listener statistics from the real binary: 100 raw listeners held for known times (measured on the clients' side),
/// then the status endpoint's sessions, their lengths by bucket, the seconds listened (within 1 %) and the peaks.
/// (In the serialized `ServerProcessTests` suite, like every real-binary test.)
extension ServerProcessTests {
    @Test func aHundredListenersSessionsAndSecondsAreCounted() throws {
        let rig = try ServedStation(["--max-per-ip", "0"])
        defer { rig.stop() }
        var held: [(client: ListenerClient, opened: Date)] = []
        for _ in 0..<100 { held.append((try ListenerClient(port: rig.port), Date())) }
        #expect(waitUntil(5) { (try? rig.station()["listeners"] as? Int) == 100 })
        // Half leave after about 2 s, the rest after about 4 s; each session's length as its client saw it.
        var seconds = 0.0
        usleep(2_000_000)
        for (client, opened) in held.prefix(50) {
            client.close()
            seconds += Date().timeIntervalSince(opened)
        }
        usleep(2_000_000)
        for (client, opened) in held.suffix(50) {
            client.close()
            seconds += Date().timeIntervalSince(opened)
        }
        #expect(waitUntil(5) { (try? rig.station()["listeners"] as? Int) == 0 })
        let output = try #require((try rig.station()["outputs"] as? [[String: Any]])?.first)
        let counted = try #require(output["listening_seconds"] as? Double)
        print("listeners: clients held \(seconds) s in all, the relay counted \(counted) s; \(output)")
        #expect(abs(counted - seconds) <= seconds * 0.01, "\(counted) s counted, \(seconds) s held")
        #expect(output["sessions"] as? Int == 100)
        let buckets = try #require(output["session_seconds"] as? [String: Int])
        #expect(buckets["10"] == 100 && buckets.values.reduce(0, +) == 100, "\(buckets)")
        #expect(output["peak_listeners"] as? Int == 100 && output["peak_listeners_hour"] as? Int == 100)
    }
}
