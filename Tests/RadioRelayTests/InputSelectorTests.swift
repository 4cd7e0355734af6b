import Testing

@testable import RadioRelay

/// Which input a station plays, on virtual time: failures switch down at once, recoveries switch up only after
/// `recover` seconds of health, flapping never makes it switch faster, dead air counts as a failure but is still
/// listened to, an operator's force holds until released or failed, and cold or hot standby decide what is connected.
/// A late input (its audio stopped while connected): `LateInputTests`.
@Suite struct InputSelectorTests {
    /// Runs `selector` from `from` to `to` in steps of `step`, calling `world` before each decision; the switches.
    static func run(
        _ selector: inout InputSelector, from: Double, to: Double, step: Double = 0.1,
        _ world: (inout InputSelector, Double) -> Void
    ) -> [InputSelector.Switch] {
        var switches: [InputSelector.Switch] = []
        var tick = 0
        // Whole ticks of `step` (rounded to a millisecond), so that no sum of steps drifts.
        var now: Double { ((from + Double(tick) * step) * 1000).rounded() / 1000 }
        while now <= to + 1e-9 {
            world(&selector, now)
            if let made = selector.decide(now: now) { switches.append(made) }
            tick += 1
        }
        return switches
    }

    @Test func aFailureSwitchesDownAtOnceAndARecoverySwitchesUpAfterRecover() {
        var selector = InputSelector(inputs: 3)
        selector.flowing(0, now: 0)
        selector.flowing(1, now: 0)
        #expect(selector.decide(now: 0) == nil && selector.playing == 0)
        selector.failed(0, reason: "the upstream ended the stream", now: 5)
        #expect(selector.decide(now: 5) == .init(from: 0, to: 1, reason: .failed, at: 5))
        selector.flowing(0, now: 8)
        #expect(selector.decide(now: 17.9) == nil, "back after 9.9 s of health: not yet")
        #expect(selector.decide(now: 18) == .init(from: 1, to: 0, reason: .recovered, at: 18))
        #expect(selector.playing == 0)
    }

    /// A primary that comes and goes every 3 s (recover 10 s) never takes over again; the station stays on the
    /// backup, switching once in a minute.
    @Test func aFlappingInputNeverMakesTheStationSwitchFasterThanRecover() {
        var selector = InputSelector(inputs: 2)
        let switches = Self.run(&selector, from: 0, to: 60) { selector, now in
            selector.flowing(1, now: now)
            let up = Int(now / 3) % 2 == 0
            if up { selector.flowing(0, now: now) } else { selector.failed(0, reason: "refused", now: now) }
        }
        #expect(switches.map(\.reason) == [.failed], "\(switches)")
        #expect(selector.playing == 1)
        // Once it stays up, it takes over after `recover`.
        let later = Self.run(&selector, from: 60, to: 75) { selector, now in
            selector.flowing(0, now: now)
            selector.flowing(1, now: now)
        }
        #expect(later.count == 1 && later[0].to == 0 && later[0].at >= 70 && later[0].at < 70.2, "\(later)")
    }

    /// Digital silence for `deadAir` seconds is a failure; the silent input is still heard, and takes over again
    /// once it has sounded for `recover`. Quiet shorter than `deadAir` (a pause in the music) is nothing.
    @Test func deadAirSwitchesAwayAndBackOnceTheInputSoundsAgain() {
        var settings = InputSelector.Settings()
        settings.deadAir = 5
        var selector = InputSelector(inputs: 2, settings: settings)
        let switches = Self.run(&selector, from: 0, to: 40) { selector, now in
            selector.flowing(0, now: now)
            selector.flowing(1, now: now)
            // Quiet for 3 s (a pause), loud, quiet from 10 s to 20 s, loud again.
            let quiet = (2..<5).contains(now) || (10..<20).contains(now)
            selector.level(0, quiet: quiet, now: now)
            selector.level(1, quiet: false, now: now)
        }
        #expect(switches.count == 2, "\(switches)")
        #expect(switches[0].reason == .deadAir && switches[0].to == 1 && abs(switches[0].at - 15) < 0.15, "\(switches)")
        #expect(switches[1].reason == .recovered && switches[1].to == 0 && abs(switches[1].at - 30) < 0.15)
        // While silenced it stayed connected: its recovery had to be heard.
        var silenced = InputSelector(inputs: 2, settings: settings)
        silenced.flowing(0, now: 0)
        silenced.flowing(1, now: 0)
        silenced.level(0, quiet: true, now: 0)
        silenced.level(0, quiet: true, now: 5)
        #expect(silenced.decide(now: 5)?.to == 1)
        #expect(silenced.shouldConnect(0, now: 5))
    }

    @Test func withNothingHealthyTheStationGoesOnWithWhatItHasUntilOneIs() {
        var selector = InputSelector(inputs: 3)
        selector.failed(0, reason: "refused", now: 0)
        selector.failed(1, reason: "refused", now: 0)
        #expect(selector.decide(now: 1) == nil && selector.playing == 0)
        selector.flowing(2, now: 2)
        #expect(selector.decide(now: 2) == .init(from: 0, to: 2, reason: .failed, at: 2))
        selector.flowing(1, now: 3)
        #expect(selector.decide(now: 12.9) == nil)
        #expect(selector.decide(now: 13)?.to == 1)
    }

    @Test func aForcedInputPlaysUntilReleasedOrFailed() {
        var selector = InputSelector(inputs: 3)
        for index in 0..<3 { selector.flowing(index, now: 0) }
        #expect(selector.decide(now: 0) == nil)
        let forcedTwo = selector.force(2)
        let forcedSeven = selector.force(7)
        #expect(forcedTwo && !forcedSeven)
        #expect(selector.decide(now: 1) == .init(from: 0, to: 2, reason: .forced, at: 1))
        #expect(selector.decide(now: 100) == nil, "the force holds however healthy the others are")
        let released = selector.force(nil)
        #expect(released)
        #expect(selector.decide(now: 101) == .init(from: 2, to: 0, reason: .released, at: 101))
        // A forced input that fails is released, and the rules pick again.
        let forcedOne = selector.force(1)
        #expect(forcedOne)
        #expect(selector.decide(now: 102)?.to == 1)
        selector.failed(1, reason: "stalled", now: 103)
        #expect(selector.decide(now: 103) == .init(from: 1, to: 0, reason: .failed, at: 103))
        #expect(selector.forced == nil)
    }

    /// Cold standby connects a lower input only once every input above it is down, one step at a time; hot standby
    /// keeps the input right below the one that plays connected.
    @Test func standbyDecidesWhatIsConnected() {
        var cold = InputSelector(inputs: 3)
        cold.flowing(0, now: 0)
        #expect([0, 1, 2].map { cold.shouldConnect($0, now: 0) } == [true, false, false])
        cold.failed(0, reason: "ended", now: 1)
        #expect([0, 1, 2].map { cold.shouldConnect($0, now: 1) } == [true, true, false])
        cold.failed(1, reason: "refused", now: 2)
        #expect([0, 1, 2].map { cold.shouldConnect($0, now: 2) } == [true, true, true])
        cold.flowing(2, now: 3)
        _ = cold.decide(now: 3)
        #expect(cold.playing == 2)
        #expect([0, 1, 2].map { cold.shouldConnect($0, now: 3) } == [true, true, true], "those above are retried")

        var settings = InputSelector.Settings()
        settings.hotStandby = true
        var hot = InputSelector(inputs: 3, settings: settings)
        hot.flowing(0, now: 0)
        hot.flowing(1, now: 0)
        #expect([0, 1, 2].map { hot.shouldConnect($0, now: 0) } == [true, true, false])
        // The primary ends: the hot standby, already flowing, takes over in the same decision.
        hot.failed(0, reason: "the upstream ended the stream", now: 5)
        #expect(hot.decide(now: 5) == .init(from: 0, to: 1, reason: .failed, at: 5))
        #expect([0, 1, 2].map { hot.shouldConnect($0, now: 5) } == [true, true, true])
    }
}

extension InputSelectorTests {
    /// A station starting with a hot standby waits for its primary's first connection (it fails within its
    /// connect timeout if it is down) instead of starting on the backup and switching up `recover` later.
    @Test func atStartUpThePrimaryIsWaitedForNotReplacedByAFasterStandby() {
        var settings = InputSelector.Settings()
        settings.hotStandby = true
        var selector = InputSelector(inputs: 2, settings: settings)
        selector.flowing(1, now: 0.1)
        #expect(selector.decide(now: 0.1) == nil && selector.playing == 0)
        selector.flowing(0, now: 0.4)
        #expect(selector.decide(now: 0.4) == nil && selector.playing == 0)
        // A primary that is down fails within its connect timeout, and the standby plays.
        var down = InputSelector(inputs: 2, settings: settings)
        down.flowing(1, now: 0.1)
        down.failed(0, reason: "connection refused", now: 0.2)
        #expect(down.decide(now: 0.2) == .init(from: 0, to: 1, reason: .failed, at: 0.2))
    }

    /// A reload keeps what is known of the inputs still listed: the one that plays goes on, a force holds, and a
    /// new input starts unknown.
    @Test func aReloadKeepsThePlayingInputAndTheForce() {
        var selector = InputSelector(inputs: 3)
        for index in 0..<3 { selector.flowing(index, now: 0) }
        selector.failed(0, reason: "refused", now: 1)
        #expect(selector.decide(now: 1)?.to == 1)
        let forced = selector.force(2)
        #expect(forced)
        #expect(selector.decide(now: 2)?.to == 2)
        // New list: a new input first, then the old 3rd and 2nd; the old 1st is gone.
        var reloaded = selector.remapped(previous: [nil, 2, 1], settings: selector.settings)
        #expect(reloaded.playing == 1 && reloaded.forced == 1)
        #expect(reloaded.isHealthy(1, now: 3) && reloaded.isHealthy(2, now: 3) && !reloaded.isHealthy(0, now: 3))
        #expect(reloaded.decide(now: 3) == nil, "the forced input plays on")
        // Without the playing input, the first plays until the rules decide.
        let without = selector.remapped(previous: [1], settings: selector.settings)
        #expect(without.playing == 0 && without.forced == nil)
    }
}

extension InputSelectorTests {
    /// Two inputs above the one that plays come back 0.1 s apart, the lower first: one switch, to the higher, not
    /// two.
    @Test func twoInputsBackAtOnceMakeOneSwitchToTheHigher() {
        var selector = InputSelector(inputs: 3)
        selector.failed(0, reason: "refused", now: 0)
        selector.failed(1, reason: "refused", now: 0)
        selector.flowing(2, now: 0)
        #expect(selector.decide(now: 0)?.to == 2)
        let switches = Self.run(&selector, from: 5, to: 20) { selector, now in
            if now >= 5 { selector.flowing(1, now: now) }
            if now >= 5.1 { selector.flowing(0, now: now) }
        }
        #expect(switches.count == 1 && switches.first?.to == 0, "\(switches)")
    }
}

extension InputSelectorTests {
    /// The scenario of a station with a backup and a file: the backup failed while it played, then the primary came
    /// back. On the primary's next failure the station steps down to the backup — the backup's old failure is
    /// forgotten once it is not needed — not past it to the file.
    @Test func afterASwitchUpTheStationStepsDownOneInputAtATimeAgain() {
        var selector = InputSelector(inputs: 3)
        selector.flowing(0, now: 0)
        selector.failed(0, reason: "refused", now: 1)
        selector.flowing(1, now: 1.5)
        #expect(selector.decide(now: 1.5)?.to == 1)
        selector.failed(1, reason: "refused", now: 2)
        selector.flowing(2, now: 2.5)
        #expect(selector.decide(now: 2.5)?.to == 2)
        selector.flowing(0, now: 3)
        #expect(selector.decide(now: 13) == .init(from: 2, to: 0, reason: .recovered, at: 13))
        #expect(selector.inputs[1] == .init(), "failed, not needed: forgotten")
        selector.idle(2)  // the pipeline disconnects the file, not needed now
        #expect([0, 1, 2].map { selector.shouldConnect($0, now: 13) } == [true, false, false])
        // The primary ends again: the backup is connected first, the file only if the backup fails too.
        selector.failed(0, reason: "ended", now: 20)
        #expect([0, 1, 2].map { selector.shouldConnect($0, now: 20) } == [true, true, false])
        #expect(selector.decide(now: 20) == nil, "nothing healthy yet: the station goes on with its silence")
        selector.flowing(1, now: 20.3)
        #expect(selector.decide(now: 20.3) == .init(from: 0, to: 1, reason: .failed, at: 20.3))
    }

    /// A release only labels the switch it allows at once; a recovery later is a recovery.
    @Test func aReleaseLabelsOnlyTheSwitchItAllows() {
        var selector = InputSelector(inputs: 2)
        selector.flowing(1, now: 0)
        selector.failed(0, reason: "refused", now: 0)
        #expect(selector.decide(now: 0)?.to == 1)
        let forced = selector.force(1)
        let released = selector.force(nil)
        #expect(forced && released)
        #expect(selector.decide(now: 1) == nil, "the primary is down: nothing to switch to")
        selector.flowing(0, now: 2)
        #expect(selector.decide(now: 12) == .init(from: 1, to: 0, reason: .recovered, at: 12))
    }
}
