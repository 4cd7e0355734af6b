import Foundation
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `[rendition STATION/NAME]` sections: what they parse to (the station's settings inherited, their own over them),
/// every way they can be wrong (with file and line), and what a reload does with them.
@Suite struct RenditionConfigTests {
    static let renditionKeys =
        "port, bind, bitrate, channels, page_ms, flush_ms, flush_hold_ms, burst, max_lag, max_listeners, max_per_ip, complexity or mount"

    static func messages(_ text: String) -> [String] { ConfigFileErrorTests.messages(text) }

    @Test func renditionsInheritTheStationAndSetTheirOwn() throws {
        let text = """
            [server]
            max_listeners = 100

            [rendition a/mid]
            port = 8002
            bind = 127.0.0.1
            bitrate = 96k
            mount = /a-96.opus

            [station a]
            upstream = /a.mp3
            port = 8000
            bitrate = 128k
            page_ms = 20
            complexity = 5

            [rendition a/low]
            port = 8001
            bitrate = 32k
            channels = 1
            max_listeners = 5
            """
        let file = try ConfigFileTests.parse(text)
        let station = try #require(file.stations.first)
        #expect(station.mount == "a.opus" && station.encoder.channels == 2)
        #expect(station.renditions.map(\.name) == ["mid", "low"])
        let mid = station.renditions[0]
        let low = station.renditions[1]
        #expect(mid.mount(in: "a") == "a-96.opus" && low.mount(in: "a") == "a-low.opus")
        #expect(mid.broadcaster.bind == "127.0.0.1" && mid.broadcaster.port == 8002 && mid.encoder.bitrate == 96_000)
        #expect(low.broadcaster.bind == "0.0.0.0" && low.broadcaster.port == 8001 && low.encoder.bitrate == 32_000)
        #expect(low.encoder.channels == 1 && mid.encoder.channels == 2)
        // The station's settings, wherever its section is: page duration, complexity, [server]'s limits.
        for rendition in station.renditions {
            #expect(rendition.encoder.pageDuration == 20 && rendition.encoder.complexity == 5)
            #expect(rendition.encoder.serial != station.encoder.serial)
        }
        #expect(mid.broadcaster.maxListeners == 100 && low.broadcaster.maxListeners == 5)
        #expect(station.outputSettings.map(\.mount) == ["a.opus", "a-96.opus", "a-low.opus"])

        // Read again, every stream has a fresh serial; a reload keeps the running ones, so nothing restarts.
        let again = try ConfigFileTests.parse(text)
        #expect(again.stations[0].renditions[1].encoder.serial != low.encoder.serial)
        let plan = ReloadPlan(running: file.stations, new: again.stations) { _ in false }
        #expect(plan.keep == ["a"])
    }

    @Test func aStationKeyForChannelsAndMount() throws {
        let file = try ConfigFileTests.parse("[station a]\nupstream = /a.mp3\nchannels = 1\nmount = live.opus\n")
        #expect(file.stations[0].encoder.channels == 1 && file.stations[0].mount == "live.opus")
    }

    @Test(
        arguments: [
            (
                "[rendition a]\nport = 8001\n",
                [
                    "r.conf:4: bad rendition \"a\": use [rendition STATION/NAME], each name 1 to 64 of A-Z a-z 0-9 _ -, "
                        + "as in [rendition jazz/low]"
                ]
            ),
            (
                "[rendition a/b.c]\nport = 8001\n",
                [
                    "r.conf:4: bad rendition \"a/b.c\": use [rendition STATION/NAME], each name 1 to 64 of A-Z a-z 0-9 _ "
                        + "-, as in [rendition jazz/low]"
                ]
            ),
            (
                "[rendition a/low]\nbitrate = 32k\n",
                ["r.conf:4: [rendition a/low] has no port: add port = 1 to 65535 or none (each output has its own)"]
            ),
            (
                "[rendition a/low]\nport = 8001\nupstream = /b.mp3\n",
                ["r.conf:6: unknown key upstream in [rendition a/low]: use \(renditionKeys)"]
            ),
            ("[rendition a/low]\nport = 8001\nchannels = 3\n", ["r.conf:6: channels = 3: use 1 or 2"]),
            (
                "[rendition a/low]\nport = 8001\nmount = a/low.opus\n",
                ["r.conf:6: mount = a/low.opus: use 1 to 128 of A-Z a-z 0-9 _ - . not starting with a dot"]
            ),
            (
                "[rendition b/low]\nport = 8001\n",
                ["r.conf:4: rendition b/low: no [station b] in the file: add it"]
            ),
            (
                "[rendition a/low]\nport = 8001\n[rendition a/low]\nport = 8002\n",
                ["r.conf:6: duplicate rendition a/low (the first is at line 4): rename one"]
            ),
            (
                "[rendition a/main]\nport = 8001\n",
                ["r.conf:4: station a: rendition main: the name main is the station's own output: choose another"]
            ),
            (
                "[rendition a/low]\nport = 8001\nmount = a.opus\n",
                ["r.conf:4: station a: rendition low: mount a.opus is taken by another output of the station"]
            ),
            (
                "[rendition a/low]\nport = 8000\n",
                ["r.conf:4: station a: rendition low: port 8000 is taken by another output of the station"]
            ),
            (
                "[rendition a/low]\nport = 8001\n[station b]\nupstream = /b.mp3\nport = 8001\n",
                [
                    "r.conf:8: station b on 0.0.0.0:8001 overlaps rendition a/low on 0.0.0.0:8001 (line 5): give each "
                        + "output its own port"
                ]
            ),
            (
                "[rendition a/low]\nport = 8001\n[station b]\nupstream = /b.mp3\nport = 8002\nmount = a-low.opus\n",
                [
                    "r.conf:9: station b: mount a-low.opus is also rendition a/low's (line 4): give each output its "
                        + "own mount"
                ]
            ),
            (
                "[server]\nstatus = 127.0.0.1:8001\n[rendition a/low]\nport = 8001\n",
                [
                    "r.conf:7: rendition a/low on 0.0.0.0:8001 overlaps the status address 127.0.0.1:8001 ([server] "
                        + "status, line 2)"
                ]
            ),
        ] as [(String, [String])])
    func problem(text: String, expected: [String]) {
        // Station a on port 8000 (lines 1 to 3) comes first, or right after a [server] section.
        let station = "[station a]\nupstream = /a.mp3\nport = 8000\n"
        let file =
            text.hasPrefix("[server]")
            ? text.replacingOccurrences(of: "[rendition", with: station + "[rendition") : station + text
        #expect(Self.messages(file) == expected, "\(file)")
    }
}
