import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Which changes a running station takes in place, and that `update` applies them.
@Suite struct StationUpdateTests {
    @Test func liveSettingsApplyInPlaceAndTheRestNeedsARestart() throws {
        let station = try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3"))
        let original = station.configuration
        var limits = original
        limits.broadcaster.maxListeners = 7
        limits.broadcaster.flushInterval = 0.1
        limits.maxLead = 2
        limits.upstream = Fixture.path("mono-48k.mp3")
        limits.chainTitles = true
        // Bitrate and complexity are the encoder's to change mid-stream (`bitrate`, `complexity`: in place).
        limits.encoder.bitrate = 64_000
        limits.encoder.complexity = 5
        #expect(station.canUpdate(to: original) && station.canUpdate(to: limits))
        // A value that no key of the option table sets (constrained VBR is `transcode`'s only): a reload cannot
        // bring it, and a difference in it is not let through.
        var unexplained = limits
        unexplained.encoder.constrainedVBR = false
        #expect(!station.canUpdate(to: unexplained))
        var mono = original
        mono.encoder.channels = 1
        var pages = original
        pages.encoder.pageDuration = 20
        var port = original
        port.broadcaster.port = 9
        var lag = original
        lag.broadcaster.maxLag = 600  // more than the page ring was sized for
        var renamed = original
        renamed.name = "other"
        var mp3 = original
        mp3.mp3 = true  // one more output: a restart
        for change in [mono, pages, port, lag, renamed, mp3] { #expect(!station.canUpdate(to: change)) }
        try station.update(limits)
        #expect(station.configuration == limits)
        #expect(station.broadcaster.configuration.maxListeners == 7)
        #expect(station.broadcaster.configuration.flushInterval == 0.1)
        #expect(station.outputs[0].encoder.bitrate == 64_000, "status shows the bitrate in force")
        #expect(throws: ConfigurationError.self) { try station.update(mono) }
        #expect(station.configuration == limits)
    }
}

extension StationUpdateTests {
    /// A stopped station is released with its last reference, and with it its listening socket: its port is free
    /// for the station that replaces it (a reload's restart).
    @Test func aStoppedStationFreesItsPort() throws {
        var station: Station? = try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3"))
        weak let released = station
        let port = try #require(station?.port)
        try station?.start()
        usleep(300_000)
        #expect(station?.stop(timeout: 5) == true)
        station = nil
        #expect(released == nil, "something still holds the stopped station")
        var configuration = StationConfiguration()
        configuration.upstream = Fixture.path("stereo-44k-128k.mp3")
        configuration.broadcaster.bind = "127.0.0.1"
        configuration.broadcaster.port = Int(port)
        _ = try Station(configuration)
    }

    /// A station replaced while listeners are connected and others arrive lets go of everything: the station, its
    /// broadcaster (its listening descriptor and eventfd) and its listeners; its successor serves on the same socket.
    @Test func aReplacedStationWithListenersIsReleased() throws {
        var station: Station? = try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3"))
        weak let released = station
        weak let broadcaster = station?.broadcaster
        try station?.start()
        let port = try #require(station?.port)
        let listener = try ListenerClient(port: port)
        defer { listener.close() }
        _ = listener.read(for: 0.3)
        var configuration = try #require(station?.configuration)
        configuration.encoder.channels = 1
        let sockets = try #require(try station?.listeningSockets(for: configuration))
        let successor = try Station(configuration, adoptedSocket: sockets.main, renditionSockets: sockets.renditions)
        #expect(station?.stop(timeout: 5) == true)
        station = nil
        try successor.start()
        defer { successor.stop(timeout: 5) }
        let arriving = try ListenerClient(port: port)
        defer { arriving.close() }
        #expect(released == nil, "something still holds the replaced station")
        #expect(broadcaster == nil, "something still holds the replaced station's broadcaster")
        #expect(arriving.read(for: 0.5).bytes.starts(with: Array("OggS".utf8)), "the successor serves the port")
    }
}

/// A station with the MP3 pass-through: the output comes last, has no encoder of its own, keeps its port and limits
/// through a reload that changes only limits, and needs a restart for another `mp3_port`.
@Suite struct MP3StationTests {
    @Test func theMP3OutputIsTheLastAndUpdatesLikeTheOthers() throws {
        var configuration = StationConfiguration()
        configuration.name = "m"
        configuration.upstream = Fixture.path("stereo-44k-128k.mp3")
        configuration.broadcaster.bind = "127.0.0.1"
        configuration.broadcaster.port = 0
        configuration.mp3 = true
        let station = try Station(configuration)
        #expect(station.outputs.map(\.format) == [.oggOpus, .mp3])
        #expect(station.outputs.map(\.mount) == ["m.opus", "m.mp3"] && station.outputs[1].label == "mp3")
        #expect(station.outputs[1].hls == nil, "no HLS of MP3 frames")
        #expect(station.httpMounts.map(\.mount.format) == [.oggOpus, .mp3])
        var limits = configuration
        limits.broadcaster.maxListeners = 9
        #expect(station.canUpdate(to: limits))
        try station.update(limits)
        #expect(station.outputs[1].broadcaster.configuration.maxListeners == 9)
        var port = configuration
        port.mp3Port = 9
        #expect(!station.canUpdate(to: port))
    }
}
