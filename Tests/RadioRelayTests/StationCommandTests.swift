import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

extension RealTimeTests {
    /// Commands through a running station's one queue, answered by its pipeline: a force, a release, a kill with no
    /// source on the air, a force of an input it does not have.
    @Suite struct StationCommandTests {
        static func outcome(_ ticket: CommandTicket) -> CommandOutcome? {
            _ = waitUntil(HTTPConnectionLoop.replyTimeout) { ticket.outcome != nil }
            return ticket.outcome
        }

        @Test func thePipelineAnswersEachCommand() throws {
            let station = try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3")) {
                $0.upstreams.append(Fixture.path("mono-48k.mp3"))
            }
            try station.start()
            defer { station.stop() }
            #expect(waitUntil(5) { station.state.playingInput == "1" })
            let forced = Self.outcome(try station.submit(.force(input: "2")))
            #expect(
                forced
                    == .done(
                        "station test: input 2 forced: it plays once it is healthy, until released or until it fails"))
            #expect(waitUntil(5) { station.state.forcedInput == "2" && station.state.playingInput == "2" })
            let released = Self.outcome(try station.submit(.release))
            #expect(released == .done("station test: the force is released: the rules choose the input again"))
            #expect(waitUntil(5) { station.state.forcedInput == nil })
            #expect(
                Self.outcome(try station.submit(.killSource)) == .refused("station test: no live source is on the air"))
            #expect(throws: ConfigurationError.self) { try station.submit(.force(input: "9")) }
        }
    }
}
