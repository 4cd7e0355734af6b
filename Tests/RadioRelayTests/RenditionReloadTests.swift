import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// A reload that adds or removes a rendition changes that output only: the main output's listener goes on with one
/// unbroken Ogg stream; the new rendition serves a stream of its own from its first listener; a removed rendition's
/// listener is closed.
@Suite(.timeLimit(.minutes(1))) struct RenditionReloadTests {
    @Test func aRenditionComesAndGoesWithoutTouchingTheMainOutput() throws {
        let station = try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3"))
        try station.start()
        defer { station.stop() }
        let main = try ListenerClient(port: station.port)
        defer { main.close() }
        var heard = main.read(for: 1.0).bytes

        var added = station.configuration
        var low = RenditionConfiguration(name: "low")
        low.encoder.bitrate = 32_000
        low.encoder.channels = 1
        low.broadcaster.bind = "127.0.0.1"
        low.broadcaster.port = 0
        added.renditions = [low]
        #expect(station.canUpdate(to: added), "a rendition added is applied in place")
        try station.update(added)
        #expect(station.outputs.map(\.label) == ["main", "low"])
        let rendition = try ListenerClient(port: station.outputs[1].broadcaster.address.port)
        defer { rendition.close() }
        let (lowBytes, lowClosed) = rendition.read(for: 2.0)
        let during = main.read(for: 0.2)
        heard += during.bytes
        #expect(!lowClosed && !during.closed)
        let lowCapture = try LiveCapture(lowBytes)
        #expect(lowCapture.headerOK && lowCapture.sequenceGaps == 0 && lowCapture.granuleRegressions == 0)
        #expect(Double(lowCapture.left.count) / 48_000 > 1.5, "the new rendition's audio: \(lowCapture.left.count)")

        // Removed again: its listener is closed, the main output's is not.
        try station.update(station.configuration.removingRenditions())
        #expect(station.outputs.map(\.label) == ["main"])
        #expect(waitUntil(3) { rendition.read(for: 0.1).closed }, "the removed rendition's listener is closed")
        let after = main.read(for: 1.5)
        heard += after.bytes
        #expect(!after.closed)
        let mainCapture = try LiveCapture(heard)
        #expect(mainCapture.headerOK && mainCapture.sequenceGaps == 0 && mainCapture.granuleRegressions == 0)
        #expect(Double(mainCapture.left.count) / 48_000 > 4, "one unbroken stream: \(mainCapture.left.count)")
        #expect(station.broadcaster.counters.snapshot.connections == 1, "the main listener was never reconnected")

        // A rendition's own encoding or address changed still restarts the station (its stream would change).
        var mono = station.configuration
        mono.encoder.channels = 1
        #expect(!station.canUpdate(to: mono))
    }
}

extension StationConfiguration {
    fileprivate func removingRenditions() -> StationConfiguration {
        var copy = self
        copy.renditions = []
        return copy
    }
}
