import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane, as `IcecastPushTests` (one Icecast with a source or two).
extension ServerProcessTests {
    /// The relay's `/status-json.xsl` has the shape of a real Icecast's (Debian's `icecast2`), member by member and
    /// type by type, for one mount and for two.
    @Suite(.timeLimit(.minutes(2)), .enabled(if: tool("icecast2") != nil, "needs icecast2 (.ci/deps --test)"))
    struct IcecastStatusShapeTests {
        typealias IcecastServer = IcecastPushTests.IcecastServer

        /// A JSON value's type as the comparison sees it (Icecast's status has no booleans).
        static func kind(_ value: Any) -> String {
            switch value {
            case is NSNull: "null"
            case is String: "string"
            case is NSNumber: "number"
            case is [Any]: "array"
            case is [String: Any]: "object"
            default: "?"
            }
        }

        /// Every member Icecast's `/status-json.xsl` has (but its XSL's `dummy`) is in ours with the same JSON type,
        /// for `icestats` and for each source; `source` is an object for one mount and an array for several in both.
        static func expectSameShape(_ theirs: [String: Any], _ ours: [String: Any], _ label: String) {
            for (key, value) in theirs where key != "source" && key != "dummy" {
                #expect(ours[key].map(Self.kind) == Self.kind(value), "\(label): icestats.\(key)")
            }
            let theirSources =
                (theirs["source"] as? [[String: Any]]) ?? [theirs["source"] as? [String: Any]].compactMap { $0 }
            let ourSources =
                (ours["source"] as? [[String: Any]]) ?? [ours["source"] as? [String: Any]].compactMap { $0 }
            #expect(
                Self.kind(theirs["source"] ?? NSNull()) == Self.kind(ours["source"] ?? NSNull()), "\(label): source")
            #expect(theirSources.count == ourSources.count, "\(label)")
            for (their, our) in zip(theirSources, ourSources) {
                for (key, value) in their where key != "dummy" {
                    #expect(our[key].map(Self.kind) == Self.kind(value), "\(label): source.\(key)")
                }
            }
        }

        /// `/status-json.xsl` from icecast2 itself and from the relay, for one mount and for two (a station with a
        /// rendition on the relay; two pushes on Icecast), compared member by member and type by type.
        @Test func statusJSONHasIcecastsShapeForOneAndTwoMounts() throws {
            let icecast = try IcecastServer(port: try freePort())
            defer { icecast.remove() }
            for mounts in [1, 2] {
                let targets = (1...mounts).map { IcecastPushTests.target(icecast, "/m\($0).opus") }
                let flags = mounts == 2 ? ["--rendition", "low:\(try freePort()):32k:mono"] : []
                let station = try ServedStation(
                    ["--display-name", "Push FM", "--genre", "test tones"] + flags + targets.flatMap { ["--push", $0] })
                defer { station.stop() }
                let connected = waitUntil(10) {
                    ((try? station.pushes()) ?? []).filter { $0.state == .connected }.count == mounts
                }
                #expect(connected, "\((try? station.pushes()) ?? []); \(icecast.state)")
                func stats(_ port: UInt16) -> [String: Any]? {
                    let request = "GET /status-json.xsl HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\n\r\n"
                    guard let answer = try? httpFetch(port, request) else { return nil }
                    let json = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
                    return json?["icestats"] as? [String: Any]
                }
                // Icecast fills its statistics from a thread of its own: its JSON is whole (its XSL writes invalid
                // JSON while `admin` and the rest are missing) and lists the mounts a moment after they connect.
                func sources(_ stats: [String: Any]?) -> Int {
                    stats?["source"] is [String: Any] ? 1 : (stats?["source"] as? [Any])?.count ?? 0
                }
                #expect(waitUntil(10) { sources(stats(icecast.port)) == mounts }, "\(icecast.state)")
                let theirs = try #require(stats(icecast.port))
                let ours = try #require(stats(station.http))
                print("icecast2, \(mounts) mount(s): \(theirs)\nradio-relay, \(mounts) mount(s): \(ours)")
                Self.expectSameShape(theirs, ours, "\(mounts) mount(s)")
            }
        }
    }
}
