import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// A station's inputs in a config file and on the command line: `upstream` repeated is the priority list, `[input
/// STATION/NAME]` sections follow it with settings of their own over the station's, the failover keys are read
/// through the option table, and every mistake is reported with its line.
@Suite struct InputConfigTests {
    static func parse(_ text: String) throws -> ServerConfiguration {
        try ServerConfiguration.parse(text, file: "r.conf", credentialsDirectory: nil)
    }

    @Test func aPrimaryABackupAndATitledFallbackFile() throws {
        let file = try Self.parse(
            """
            [station main]
            upstream = http://primary.example:8000/live.mp3
            upstream = http://user:secret@backup.example:8000/live.mp3
            stall_timeout = 4
            dead_air = 5
            dead_air_level = -45 dBFS
            recover = 20
            crossfade = 1.5
            standby = hot

            [input main/fallback]
            upstream = /srv/radio/station-id.mp3
            title = Station ID
            connect_timeout = 2
            """)
        let station = try #require(file.stations.first)
        let inputs = station.inputs
        #expect(inputs.map(\.name) == ["1", "2", "fallback"])
        #expect(inputs.map(\.kind) == [.http, .http, .file])
        #expect(inputs[1].shown == "http://***@backup.example:8000/live.mp3")
        #expect(inputs.map(\.stallTimeout) == [4, 4, 4], "an input section takes the station's settings it leaves out")
        #expect(inputs.map(\.connectTimeout) == [10, 10, 2])
        #expect(inputs.map(\.title) == [nil, nil, "Station ID"])
        #expect(inputs[2].isPaced && !inputs[0].isPaced)
        var failover = FailoverSettings()
        failover.deadAir = 5
        failover.deadAirLevel = -45
        failover.recover = 20
        failover.crossfade = 1.5
        failover.hotStandby = true
        #expect(station.failover == failover)
        #expect(station.upstream == "http://primary.example:8000/live.mp3")
        #expect(station.inputsShown.hasPrefix("input 1 http://primary.example:8000/live.mp3, then input 2"))
    }

    /// One rule for what shows while an input plays: a file's own `title` (its section's) over its ID3 title, a
    /// station's `title` only where the input says none; a live source without metadata shows the station's title,
    /// else its ice-name, else nothing (never the relayed input's last title).
    @Test func whichTitleShows() throws {
        let file = try Self.parse(
            """
            [server]
            http = 127.0.0.1:8001
            [station main]
            upstream = /srv/a.mp3
            title = Station Title
            source_password = dj-pass-123
            [input main/id]
            upstream = /srv/id.mp3
            title = Station ID
            """)
        let station = try #require(file.stations.first)
        #expect(station.inputs.map(\.titleIsOwn) == [false, false, true])
        let chain = StageChain(StageChain.Configuration(), encoders: [])
        let made = station.inputs.map { StationInput($0, station: station, chain: chain) }
        let (live, upstream, id) = (made[0], made[1], made[2])
        #expect(upstream.title == "Station Title" && id.title == "Station ID" && live.title == "Station Title")
        upstream.ownTitle = "ID3 Title"
        id.ownTitle = "ID3 Title"
        #expect(upstream.title == "ID3 Title", "the station's title is for an input that says none")
        #expect(id.title == "Station ID", "a file's own title is the operator's choice over its ID3 title")
        live.ownTitle = "DJ's Song"
        #expect(live.title == "DJ's Song")
        var plain = station
        plain.title = nil
        let quiet = StationInput(plain.inputs[0], station: plain, chain: chain)
        #expect(quiet.title == "", "a DJ without metadata: no title, not the relayed one's")
        quiet.live?.name = "Bob's Show"
        #expect(quiet.title == "Bob's Show")
    }

    @Test func aStationMayHaveOnlyInputSections() throws {
        let file = try Self.parse(
            "[station a]\n[input a/live]\nupstream = http://live.example/a.mp3\n[input a/loop]\nupstream = /a.mp3\n")
        #expect(file.stations.first?.inputs.map(\.name) == ["live", "loop"])
    }

    @Test(
        arguments: [
            (
                "[station a]\nupstream = http://x.example/a.mp3\nupstream = tcp://root.example:8000\n",
                "r.conf:3: input 2 (tcp://root.example:8000) is Ogg Opus (relayed as it is) but input 1 is MP3: a "
                    + "station's inputs are all MP3 or all Ogg Opus (tcp://, or a URL or path ending in .opus, .ogg "
                    + "or .oga)"
            ),
            (
                "[station a]\nupstream = /a.mp3\n[input a/edge]\nupstream = http://root.example/a.opus\n",
                "r.conf:4: input edge (http://root.example/a.opus) is Ogg Opus (relayed as it is) but input 1 is "
                    + "MP3: a station's inputs are all MP3 or all Ogg Opus (tcp://, or a URL or path ending in .opus, "
                    + ".ogg or .oga)"
            ),
            (
                "[station a]\n[input a/x]\ntitle = T\n",
                "r.conf:2: [input a/x] has no upstream: add upstream = an http(s) URL, a file: URL or a path"
            ),
            (
                "[station a]\nupstream = /a.mp3\n[input b/x]\nupstream = /b.mp3\n",
                "r.conf:3: input b/x: no [station b] in the file: add it"
            ),
            (
                "[station a]\nupstream = /a.mp3\n[input a/2]\nupstream = /b.mp3\n",
                "r.conf:3: [input a/2]: an input's name is not a number (1, 2, … name the station's upstream "
                    + "values): use a word, as in [input a/fallback]"
            ),
            (
                "[station a]\nupstream = /a.mp3\n[input a/x]\nupstream = /b.mp3\n[input a/x]\nupstream = /c.mp3\n",
                "r.conf:5: duplicate input a/x (the first is at line 3): rename one"
            ),
            (
                "[station a]\nupstream = /a.mp3\n[input a/x]\nupstream = /b.mp3\nbitrate = 64k\n",
                "r.conf:5: unknown key bitrate in [input a/x]: use upstream, pace, connect_timeout, stall_timeout "
                    + "or title"
            ),
            (
                "[station a]\nupstream = /a.mp3\ndead_air_level = -5\n",
                "r.conf:3: dead_air_level = -5: use -90 to -10 dBFS"
            ),
            ("[station a]\nupstream = /a.mp3\nstandby = warm\n", "r.conf:3: standby = warm: use hot or cold"),
        ])
    func mistakesAreReportedWithTheirLine(_ text: String, _ message: String) {
        #expect(ConfigFileErrorTests.messages(text) == [message])
    }

    @Test func theCommandLineTakesSeveralUpstreamsAndRefusesAMixedList() throws {
        let serve = try CommandLineTests.serve([
            "serve", "--upstream", "http://a.example/live.mp3", "--upstream", "/srv/loop.mp3", "--standby", "hot",
            "--dead-air", "4",
        ])
        #expect(serve.station.inputs.map(\.upstream) == ["http://a.example/live.mp3", "/srv/loop.mp3"])
        #expect(serve.station.failover.hotStandby && serve.station.failover.deadAir == 4)
        #expect(throws: UsageError.self) {
            try Command.parse(["serve", "--upstream", "/a.mp3", "--upstream", "tcp://127.0.0.1:8000"])
        }
    }

    /// More inputs than a station takes are refused: a list is bounded like everything else.
    @Test func theListIsBounded() {
        var station = StationConfiguration()
        station.upstreams = (0...FailoverSettings.maxInputs).map { "/srv/\($0).mp3" }
        #expect(throws: ConfigurationError.self) { try station.validate() }
        station.upstreams.removeLast()
        #expect(throws: Never.self) { try station.validateInputs() }
    }
}
