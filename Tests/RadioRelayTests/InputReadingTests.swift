import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The two kinds of input reading, each made by its station's chain: what the pipeline observes, what reaches the
/// chain (only while the input plays, or at a switch to it), and what each keeps for a switch.
@Suite struct InputReadingTests {
    static func station(upstream: String) -> StationConfiguration {
        var station = StationConfiguration()
        station.name = "a"
        station.upstream = upstream
        return station
    }

    static func observe(
        _ reading: any InputReading, _ bytes: [UInt8], plays: Bool, meters: Bool = false
    ) throws -> [InputObservation] {
        var seen: [InputObservation] = []
        try bytes.withUnsafeBytes { buffer in
            try reading.read(buffer, ReadingRole(plays: plays, meters: meters)) { seen.append($0) }
        }
        return seen
    }

    @Test func theChainMakesTheReadingOfItsKind() throws {
        let transcoding = Self.station(upstream: "http://example.org/a.mp3")
        let edge = Self.station(upstream: "tcp://127.0.0.1:9000")
        let stage = StageChain(StageChain.Configuration(), encoders: [])
        let relay = try OpusRelayChain(OpusRelayChain.Settings(), clock: { 0 })
        #expect(stage.reading(for: transcoding.inputs[0], station: transcoding) is DecodedInput)
        #expect(relay.reading(for: edge.inputs[0], station: edge) is RelayedInput)
        let input = StationInput(edge.inputs[0], station: edge, chain: relay)
        #expect(input.reading.expectedAudio == "Opus audio")
        if case .network = input.origin {} else { Issue.record("a root is a network input") }
    }

    /// A decoded input that does not play: its format and audio are observed (with the meter's verdicts), its
    /// newest second is kept and nothing reaches the chain; a switch to it hands the chain only what the handover
    /// asks for.
    @Test func aDecodedStandbyKeepsItsNewestSecondAndHandsOverWhatTheSwitchAsks() throws {
        let station = Self.station(upstream: Fixture.path("stereo-44k-128k.mp3"))
        var settings = StageChain.Configuration()
        settings.holdsDecodedAudio = true
        let chain = StageChain(settings, encoders: [])
        let reading = DecodedInput(station.inputs[0], station: station, chain: chain)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixture.path("stereo-44k-128k.mp3"))))
        let seen = try Self.observe(reading, bytes, plays: false, meters: true)
        var seconds = 0.0
        var verdicts = 0
        var formats = 0
        for observation in seen {
            switch observation {
            case .format: formats += 1
            case .audio(let audio):
                seconds += audio.seconds
                if audio.quiet != nil { verdicts += 1 }
                #expect(audio.buffer != nil)
            case .title: break
            }
        }
        #expect(formats == 1 && seconds > 2 && verdicts > 10)
        #expect(chain.heldSeconds == 0, "an input that does not play feeds no chain")
        #expect(reading.kept.frameCount == station.commonRate, "its newest second, no more")
        #expect(reading.counters.decoded > 0 && reading.counters.packets > 0)
        var handover = InputHandover()
        handover.keptFrames = 960
        try reading.takeOver(handover)
        #expect(chain.heldSeconds == 960.0 / Double(station.commonRate))
        #expect(reading.kept.frameCount == 0)
    }

    /// A root that does not play: its title and packets are observed, nothing reaches the relay chain; a switch to
    /// it hands the chain the root's head and tags, and its packets follow while it plays.
    @Test func aRelayedStandbyHandsItsHeadAndTagsOverAtTheSwitch() throws {
        let station = Self.station(upstream: "tcp://127.0.0.1:9000")
        let chain = try OpusRelayChain(OpusRelayChain.Settings(), clock: { 0 })
        let reading = RelayedInput(station.inputs[0], chain: chain)
        let packet = OpusRelayHostileTests.packet
        let ogg = try OggStream(serial: 7)
        ogg.append(OpusRepager.defaultHead(), granule: 0, beginning: true)
        var bytes = ogg.flush().flatMap(\.bytes)
        ogg.append(Encoder.opusTags(vendor: "test", comments: ["TITLE=Root Song"]), granule: 0)
        bytes += ogg.flush().flatMap(\.bytes)
        ogg.append(packet, granule: 960)
        ogg.append(packet, granule: 1920)
        bytes += ogg.flush().flatMap(\.bytes)
        let seen = try Self.observe(reading, bytes, plays: false)
        let titles = seen.compactMap { if case .title(let title) = $0 { title } else { nil } }
        let audio = seen.filter { if case .audio = $0 { true } else { false } }
        #expect(titles == ["Root Song"] && audio.count == 2)
        #expect(chain.statistics.packets == 0, "a root that does not play feeds no chain")
        reading.takeOver(InputHandover())
        ogg.append(packet, granule: 2880)
        _ = try Self.observe(reading, ogg.flush().flatMap(\.bytes), plays: true)
        #expect(chain.statistics.packets == 1)
    }

    /// A root whose stream has more than two channels fails at its head, before any of its packets.
    @Test func aMultichannelRootFailsAtItsHead() throws {
        let station = Self.station(upstream: "tcp://127.0.0.1:9000")
        let chain = try OpusRelayChain(OpusRelayChain.Settings(), clock: { 0 })
        let reading = RelayedInput(station.inputs[0], chain: chain)
        // OpusHead, version 1, 6 channels, pre-skip 312, 48 kHz, gain 0, family 1: 4 streams, 2 coupled, mapping.
        let head: [UInt8] =
            Array("OpusHead".utf8) + [1, 6, 0x38, 0x01, 0x80, 0xBB, 0, 0, 0, 0, 1, 4, 2, 0, 4, 1, 2, 3, 5]
        let ogg = try OggStream(serial: 9)
        ogg.append(head, granule: 0, beginning: true)
        #expect(throws: DownloadError.self) {
            _ = try Self.observe(reading, ogg.flush().flatMap(\.bytes), plays: true)
        }
        #expect(chain.statistics.packets == 0)
    }
}
