import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `port = none`, and what a protected station (`listener_add`, `htpasswd`) may not have: a raw TCP port on any
/// output.
@Suite struct ProtectedStationConfigTests {
    static let head = "[station a]\nupstream = /a.mp3\nlistener_add = https://auth.example.org/add\n"

    @Test func aRawPortOnAProtectedStationIsAnErrorThatSaysWhy() {
        let why = "r.conf: station a: protected (listener_add), and raw TCP carries no credentials"
        let cases: [(String, String)] = [
            ("", "\(why): set port = none (its listeners come to the HTTP address), or remove the protection"),
            (
                "port = 8000\n",
                "\(why): set port = none (its listeners come to the HTTP address), or remove the protection"
            ),
            (
                "port = none\nmp3 = yes\nmp3_port = 9100\n",
                "\(why): remove mp3_port (the MP3 output is served at /NAME.mp3 over HTTP)"
            ),
            (
                "port = none\n[rendition a/low]\nport = 9001\nbitrate = 32k\n",
                "\(why): give rendition low no raw port (low:none:BITRATE, or port = none in its section)"
            ),
        ]
        for (extra, expected) in cases {
            let messages = ConfigFileErrorTests.messages(Self.head + extra)
            #expect(messages.contains { $0.hasSuffix(expected.dropFirst("r.conf: ".count)) }, "\(extra): \(messages)")
        }
    }

    @Test func aProtectedStationWithoutRawPortsIsValid() throws {
        let configuration = try ConfigFileTests.parse(
            Self.head + "port = none\nmp3 = yes\n[rendition a/low]\nport = none\nbitrate = 32k\n")
        let station = try #require(configuration.stations.first)
        #expect(station.authentication.isOn && !station.broadcaster.rawListeners)
        #expect(station.outputSettings.map(\.broadcaster.rawListeners) == [false, false, false])
        #expect(SocketActivation.listeners(of: station).isEmpty)
        // The command line's rendition says it the same way.
        let rendition = try #require(Values.rendition("low:none:32k:mono", of: station))
        #expect(!rendition.broadcaster.rawListeners && rendition.encoder.channels == 1)
    }

    /// An unprotected station may do without a raw port too: its outputs then bind nothing (an MP3 output that
    /// names its own port keeps it).
    @Test func portNoneBindsNothing() throws {
        var configuration = StationConfiguration()
        configuration.name = "a"
        configuration.upstream = Fixture.path("stereo-44k-128k.mp3")
        configuration.broadcaster.bind = "127.0.0.1"
        configuration.broadcaster.rawPort = nil
        configuration.mp3 = true
        let station = try Station(configuration)
        #expect(station.outputs.allSatisfy { $0.broadcaster.listenFD == nil })
        #expect(station.port == 0 && station.listenAddress == "none")
        configuration.mp3Port = Int(try freePort())
        let mp3Open = try Station(configuration)
        #expect(mp3Open.outputs.map { $0.broadcaster.listenFD != nil } == [false, true])
        #expect(
            try ConfigFileTests.parse("[station a]\nupstream = /a.mp3\nport = none\n").stations[0].broadcaster.rawPort
                == nil)
    }
}

extension ProtectedStationConfigTests {
    /// A protected station's overflow to a mount of this same server must land on a protected station.
    @Test func anOverflowToAnUnprotectedMountOfOursIsAnError() throws {
        let open = "[station b]\nupstream = /b.mp3\nport = 8101\n"
        let guarded =
            "[station c]\nupstream = /c.mp3\nport = none\nhtpasswd = none\nlistener_add = https://a.example/\n"
        func text(_ overflow: String) -> String {
            "[server]\nhttp = 8001\n" + Self.head + "port = none\noverflow = \(overflow)\n" + open + guarded
        }
        let messages = ConfigFileErrorTests.messages(text("http://127.0.0.1:8001/b.opus"))
        #expect(
            messages.contains {
                $0.contains(
                    "station a is protected, but its overflow http://127.0.0.1:8001/b.opus is station b's mount")
            }, "\(messages)")
        #expect(!ConfigFileErrorTests.messages(text("http://localhost:8001/b.opus?x=1")).isEmpty)
        // Its own protected station, another port, another host: fine.
        for fine in ["http://127.0.0.1:8001/c.opus", "http://127.0.0.1:8002/b.opus", "https://edge.example/b.opus"] {
            #expect(ConfigFileErrorTests.messages(text(fine)).isEmpty, "\(fine)")
        }
    }
}
