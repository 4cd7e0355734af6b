import Testing

@testable import RadioRelay

/// A late input (connected, its audio stopped: a hang): when the pipeline calls it late, the waits between arrivals
/// that is judged against, and how the selector gives way to a flowing standby and connects a cold one.
@Suite struct LateInputTests {
    /// A late input (connected, its audio stopped: a hang) gives way at once to a flowing standby, without a
    /// failure: it stays connected, and takes over again once it has flowed for `recover`. With no flowing input
    /// below, the station stays where it is; the input's own return needs no switch.
    @Test func aLateInputGivesWayToAFlowingStandby() {
        var hot = InputSelector.Settings()
        hot.hotStandby = true
        var selector = InputSelector(inputs: 2, settings: hot)
        selector.flowing(0, now: 0)
        selector.flowing(1, now: 0)
        selector.late(0, now: 5)
        #expect(selector.decide(now: 5) == .init(from: 0, to: 1, reason: .late, at: 5))
        #expect(selector.inputs[0].failure == nil && selector.shouldConnect(0, now: 5), "still connected")
        selector.flowing(0, now: 6)
        #expect(selector.decide(now: 15.9) == nil)
        #expect(selector.decide(now: 16) == .init(from: 1, to: 0, reason: .recovered, at: 16))

        var alone = InputSelector(inputs: 2)
        alone.flowing(0, now: 0)
        alone.late(0, now: 5)
        #expect(alone.decide(now: 5) == nil && alone.playing == 0, "no standby flows: nothing to switch to")
        // A cold standby is connected as soon as the input above it is late (not after the stall rule), and takes
        // over once it flows; one that is not needed any more (the late input flows again) is let go.
        #expect(alone.shouldConnect(1, now: 5))
        alone.flowing(0, now: 5.5)
        #expect(!alone.shouldConnect(1, now: 5.5))
        #expect(!alone.inputs[0].isLate && alone.decide(now: 5.5) == nil)
        // A late input that then stalls fails as any other.
        alone.late(0, now: 7)
        alone.failed(0, reason: "stalled: no data for 5 s", now: 12)
        #expect(!alone.inputs[0].isLate && alone.inputs[0].failure != nil)

        var cold = InputSelector(inputs: 3)
        cold.flowing(0, now: 0)
        #expect(!cold.shouldConnect(1, now: 1))
        cold.late(0, now: 5)
        #expect(cold.shouldConnect(1, now: 5) && !cold.shouldConnect(2, now: 5), "one step down at a time")
        cold.flowing(1, now: 5.3)
        #expect(cold.decide(now: 5.3) == .init(from: 0, to: 1, reason: .late, at: 5.3))
    }

    /// When the pipeline calls an input late: no audio for 0.5 s, or 1.5 times its longest wait between arrivals (an
    /// Ogg source whose pages hold a second arrives a second apart, and is not late between two), with the station's
    /// lead (encoded ahead of the clock and held to play) under 0.25 s. A wait the lead still covers is ridden out: a
    /// lossy link's TCP retransmission of 0.6 s behind a lead of 1.1 s is no switch (an edge flapped between its roots
    /// under 3 % loss when the rule looked only at the audio held, 0 s on an edge that releases at once).
    @Test func whenAnInputIsLate() {
        #expect(Pipeline.isLate(sinceAudio: 0.5, longestGap: 0.12, lead: 0.1))
        #expect(!Pipeline.isLate(sinceAudio: 0.49, longestGap: 0.12, lead: 0.1))
        #expect(!Pipeline.isLate(sinceAudio: 2, longestGap: 0.12, lead: 0.3), "more than a quarter second in hand")
        #expect(!Pipeline.isLate(sinceAudio: 0.6, longestGap: 0.12, lead: 1.1 - 0.6), "a retransmission in the lead")
        #expect(Pipeline.isLate(sinceAudio: 0.9, longestGap: 0.12, lead: 1.1 - 0.9), "the lead nearly spent")
        #expect(Pipeline.isLate(sinceAudio: 1, longestGap: 0.12, lead: -0.2), "behind the clock: silence is near")
        #expect(!Pipeline.isLate(sinceAudio: 1.0, longestGap: 1.0, lead: 0.05), "one-second pages: not between two")
        #expect(Pipeline.isLate(sinceAudio: 1.5, longestGap: 1.0, lead: 0.05))
    }

    /// The waits the late rule is judged against: the gaps between arrivals of one connection, not the wait for its
    /// first audio (a root that had nothing to send yet made an edge wait 1.5 s past a 1 s lead: a hole heard), and
    /// only recent ones (a TCP stall recovering a loss is forgotten within 15 to 30 s).
    @Test func theWaitsBetweenArrivalsAreRecentOnesOfThisConnection() {
        var connection = StationInput.Connection(openedAt: 100, lastAudioAt: 100, packets: 7, bytes: 0)
        connection.audioArrived(packets: 8, bytes: 100, now: 101.2)
        #expect(connection.longestGap(now: 101.2) == 0, "the first audio's wait is set-up")
        #expect(!connection.knowsCadence)
        for step in 1...10 { connection.audioArrived(packets: 8 + step, bytes: 100, now: 101.2 + 0.1 * Double(step)) }
        #expect(abs(connection.longestGap(now: 102.2) - 0.1) < 1e-9)
        connection.audioArrived(packets: 20, bytes: 100, now: 103.4)  // a stall of 1.2 s
        #expect(abs(connection.longestGap(now: 103.4) - 1.2) < 1e-9)
        var now = 103.4
        while now < 140 {
            now += 0.1
            connection.audioArrived(packets: connection.lastPackets + 1, bytes: 100, now: now)
            if now < 114.9 { #expect(connection.longestGap(now: now) >= 1.2) }
        }
        #expect(abs(connection.longestGap(now: now) - 0.1) < 1e-6, "the stall is forgotten")
        // One-second pages keep their second.
        var pages = StationInput.Connection(openedAt: 0, lastAudioAt: 0, packets: 0, bytes: 0)
        pages.audioArrived(packets: 1, bytes: 0, now: 1)
        pages.audioArrived(packets: 2, bytes: 0, now: 2)
        #expect(!pages.knowsCadence, "one wait is not a cadence: the second page is not late before the third")
        for second in 3...100 { pages.audioArrived(packets: second, bytes: 0, now: Double(second)) }
        #expect(pages.knowsCadence)
        #expect(pages.longestGap(now: 100.5) == 1)
        #expect(pages.longestGap(now: 200) == 0, "nothing for two windows: no recent wait")
    }
}
