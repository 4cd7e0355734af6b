import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// A station's clock on virtual time: an upstream model delivers chunks of audio stamped with the source's own time,
/// the loop steps the clock, and the queue follows its decisions. Latency is what a listener playing at real time
/// hears: where a sample lands in the stream (origin + media position) minus when the source made it.
struct ClockSimulation {
    var clock: StreamClock
    var now: Double
    /// Decoded chunks waiting: source time of their first sample, seconds of audio.
    var queue: [(source: Double, seconds: Double)] = []
    var latencies: [(at: Double, latency: Double)] = []
    /// Iterations that dropped audio: a burst should cost one cut, not many.
    var cuts = 0
    var maxAhead = -Double.infinity
    var minAhead = Double.infinity

    init(settings: StreamClock.Settings = .init(), start: Double = 1_000) {
        clock = StreamClock(settings: settings, now: start)
        now = start
    }

    var queued: Double { queue.reduce(0) { $0 + $1.seconds } }

    mutating func deliver(source: Double, seconds: Double) { queue.append((source, seconds)) }

    /// One loop iteration at `now`; returns the clock's decision after carrying it out on the queue.
    @discardableResult
    mutating func step(finite: Bool = false) -> StreamClock.Step {
        let step = clock.step(now: now, queued: queued, finite: finite)
        if step.drop > 0 { cuts += 1 }
        take(step.drop, from: nil, scale: 1)
        // Where the released audio starts in the stream, as a time on the wall clock.
        let start = clock.origin + clock.encoded - step.silence - step.release * (1 - step.nudge)
        take(step.release, from: start, scale: 1 - step.nudge)
        let ahead = clock.ahead(now: now)
        maxAhead = max(maxAhead, ahead)
        minAhead = min(minAhead, ahead)
        return step
    }

    /// Takes `seconds` from the front; with `from`, records each chunk's latency (where it lands minus its source).
    private mutating func take(_ seconds: Double, from start: Double?, scale: Double) {
        var done = 0.0
        while seconds - done > 1e-12, !queue.isEmpty {
            let n = min(seconds - done, queue[0].seconds)
            if let start { latencies.append((now, start + done * scale - queue[0].source)) }
            queue[0].source += n
            queue[0].seconds -= n
            done += n
            if queue[0].seconds <= 1e-12 { queue.removeFirst() }
        }
    }

    /// Median latency of the samples released in `range` (seconds since the start).
    func latency(in range: ClosedRange<Double>, start: Double = 1_000) -> Double {
        let values = latencies.filter { range.contains($0.at - start) }.map(\.latency).sorted()
        return values.isEmpty ? .nan : values[values.count / 2]
    }
}

@Suite struct StreamClockTests {
    /// A live upstream at real time: a 26 ms frame every 26 ms, delivered in 100 ms bursts, `delay` after the source
    /// made them. Runs from `from` to `to` (seconds since the start), stepping every 20 ms, with `drift` parts per
    /// million on the source's clock.
    static func live(
        _ sim: inout ClockSimulation, from: Double, to: Double, delay: Double = 0.05, drift: Double = 0,
        sourceStart: inout Double, deliveredUntil: inout Double, step: Double = 0.02, start: Double = 1_000
    ) {
        var t = from
        while t < to {
            sim.now = start + t
            // The source has made audio up to source time (t - delay) × (1 + drift); deliver it in 100 ms pieces.
            let made = (t - delay) * (1 + drift * 1e-6) - sourceStart
            while made - deliveredUntil >= 0.1 {
                // Stamped with the wall time the source made it (its clock runs `drift` fast), so latency is what a
                // listener hears, not an artefact of the two clocks.
                sim.deliver(source: (sourceStart + deliveredUntil) / (1 + drift * 1e-6) + delay, seconds: 0.1)
                deliveredUntil += 0.1
            }
            sim.step()
            t += step
        }
    }

    @Test func aBurstOnConnectIsHeldToTheLeadAndLatencyStaysFlat() {
        var sim = ClockSimulation()
        var sourceStart = -20.0
        var delivered = 0.0
        // Icecast's burst-on-connect: 20 s of the past at once, then real time.
        Self.live(&sim, from: 0, to: 60, sourceStart: &sourceStart, deliveredUntil: &delivered)
        #expect(sim.maxAhead <= 1.0 + 1e-9)
        #expect(abs(sim.clock.droppedSeconds - 19) < 0.3)
        // The audio queued during the pause is cut once when it is read, and once more as the rest arrives.
        #expect(sim.cuts <= 2, "\(sim.cuts) cuts")
        #expect(sim.clock.silenceSeconds == 0)
        let early = sim.latency(in: 5...6)
        let late = sim.latency(in: 59...60)
        #expect(abs(late - early) < 0.05, "latency at 5 s \(early), at 60 s \(late)")
    }

    @Test func aFiniteUpstreamIsHeldBackNotDropped() {
        var sim = ClockSimulation()
        var source = 0.0
        for i in 0..<3000 {
            sim.now = 1_000 + Double(i) * 0.02
            // A file: read as fast as the clock allows, 100 ms at a time.
            while sim.clock.mayFeed(now: sim.now, queued: sim.queued) {
                sim.deliver(source: source, seconds: 0.1)
                source += 0.1
            }
            let step = sim.step(finite: true)
            #expect(step.drop == 0)
            #expect(!step.mayRead || sim.clock.ahead(now: sim.now) < 1.0 + 1e-9)
        }
        #expect(sim.maxAhead <= 1.0 + 1e-9)
        #expect(sim.clock.droppedSeconds == 0 && sim.clock.silenceSeconds == 0)
        #expect(sim.clock.nap(now: sim.now, queued: 5) == 0.021)
        #expect(sim.clock.nap(now: sim.now, queued: 0) == nil)
    }

    @Test func silenceDuringAStallIsTakenBackWhenTheLateAudioArrives() {
        var sim = ClockSimulation()
        var sourceStart = 0.0
        var delivered = 0.0
        Self.live(&sim, from: 0, to: 30, sourceStart: &sourceStart, deliveredUntil: &delivered)
        let before = sim.latency(in: 25...30)
        // The upstream stalls for 5 s: nothing arrives, the loop keeps running.
        var t = 30.0
        while t < 35 {
            sim.now = 1_000 + t
            sim.step()
            t += 0.02
        }
        #expect(abs(sim.clock.silenceSeconds - 4.85) < 0.2)
        #expect(sim.minAhead >= -0.3 - 0.02)
        // Then it sends what it held back at once and goes on at real time.
        Self.live(&sim, from: 35, to: 60, sourceStart: &sourceStart, deliveredUntil: &delivered)
        let after = sim.latency(in: 50...60)
        print("stall: latency before \(before) s, after \(after) s, silence \(sim.clock.silenceSeconds) s")
        #expect(abs(after - before) < 0.05, "latency before the stall \(before), after it \(after)")
        #expect(sim.maxAhead <= 1.0 + 1e-9)
    }

    @Test func anOutageWithAFreshReconnectKeepsTheNewAudio() {
        var sim = ClockSimulation()
        var sourceStart = 0.0
        var delivered = 0.0
        Self.live(&sim, from: 0, to: 20, sourceStart: &sourceStart, deliveredUntil: &delivered)
        let before = sim.latency(in: 15...20)
        var t = 20.0
        while t < 30 {
            sim.now = 1_000 + t
            sim.step()
            t += 0.02
        }
        // Reconnected to a live source: what it made meanwhile is lost, new audio arrives on time.
        delivered += 10
        Self.live(&sim, from: 30, to: 50, sourceStart: &sourceStart, deliveredUntil: &delivered)
        let after = sim.latency(in: 40...50)
        #expect(abs(after - before) < 0.1, "before \(before), after \(after)")
        #expect(sim.clock.droppedSeconds < 0.05)
        #expect(abs(sim.clock.silenceSeconds - 9.85) < 0.2)
    }

    @Test func aPauseOfTheLoopIsNotFilledWithSilence() {
        var sim = ClockSimulation()
        var sourceStart = 0.0
        var delivered = 0.0
        Self.live(&sim, from: 0, to: 20, sourceStart: &sourceStart, deliveredUntil: &delivered)
        let encodedBefore = sim.clock.encoded
        // SIGSTOP for 60 s: the next iteration comes 60 s later, with 60 s of upstream audio queued in the kernel.
        Self.live(&sim, from: 80, to: 81, sourceStart: &sourceStart, deliveredUntil: &delivered, step: 1)
        #expect(sim.clock.silenceSeconds == 0)
        #expect(abs(sim.clock.pausedSeconds - 60) < 0.1)
        #expect(sim.clock.encoded - encodedBefore < 1.1)
        #expect(sim.maxAhead <= 1.0 + 1e-9)
        Self.live(&sim, from: 81, to: 100, sourceStart: &sourceStart, deliveredUntil: &delivered)
        // The audio queued during the pause is cut once when it is read, and once more as the rest arrives.
        #expect(sim.cuts <= 2, "\(sim.cuts) cuts")
        #expect(sim.clock.silenceSeconds == 0)
        #expect(sim.minAhead > -0.3)
    }

    @Test func arrivalJitterWithinTheAllowanceInsertsNoSilence() {
        var sim = ClockSimulation()
        var generator = SplitMix64(seed: 5)
        var source = 0.0
        var t = 0.0
        var nextArrival = 0.1
        while t < 120 {
            sim.now = 1_000 + t
            if t >= nextArrival {
                sim.deliver(source: source, seconds: 0.1)
                source += 0.1
                // Each 100 ms piece arrives when it is complete plus 0–150 ms.
                nextArrival = source + 0.1 + Double(generator.next() % 150) / 1000
            }
            sim.step()
            t += 0.02
        }
        #expect(sim.clock.silenceSeconds == 0)
        #expect(sim.clock.droppedSeconds == 0)
    }

    @Test(arguments: [300.0, -300.0])
    func aDayAtADriftingClockHasNoGapAndNoSkip(_ ppm: Double) {
        var sim = ClockSimulation()
        var sourceStart = 0.0
        var delivered = 0.0
        Self.live(
            &sim, from: 0, to: 86_400, drift: ppm, sourceStart: &sourceStart, deliveredUntil: &delivered, step: 0.05)
        #expect(sim.clock.silenceSeconds == 0, "\(ppm) ppm: silence inserted")
        #expect(sim.clock.droppedSeconds == 0, "\(ppm) ppm: audio dropped")
        #expect(sim.minAhead > -0.3 && sim.maxAhead < 1.0)
        #expect(sim.clock.nudge.magnitude <= 0.001)
        // The latency at the end of the day is where it was after the first minute, within the drift band.
        #expect(abs(sim.latency(in: 86_000...86_400) - sim.latency(in: 30...60)) < 0.2)
    }

    @Test func framesAndEnvelopeNeverTrap() {
        #expect(PCMBuffer.frames(0.5, rate: 48_000) == 24_000)
        #expect(PCMBuffer.frames(0.5, rate: 44_100) == 22_050)
        #expect(PCMBuffer.frames(1e-9, rate: 48_000) == 0)
        #expect(PCMBuffer.frames(-3, rate: 48_000) == 0)
        #expect(PCMBuffer.frames(.infinity, rate: 48_000) == 0)
        #expect(PCMBuffer.frames(.nan, rate: 48_000) == 0)
        #expect(PCMBuffer.frames(1e300, rate: 48_000) == Int(Int32.max))
        var envelope = Envelope()
        #expect(envelope.minimum == nil)
        envelope.note(3, at: 0, window: 4)
        envelope.note(1, at: 0.5, window: 4)
        envelope.note(2, at: 2.5, window: 4)
        #expect(envelope.minimum == 1)
        envelope.note(5, at: 4.6, window: 4)
        #expect(envelope.minimum == 2)
        envelope.note(7, at: 1e9, window: 4)
        #expect(envelope.minimum == 7)
        var clock = StreamClock(now: 0)
        let step = clock.step(now: 1, queued: .nan, finite: false)
        #expect(step.release == 0 && step.drop == 0)
    }

    @Test func opusClockConvertsWithoutTrapping() {
        #expect(OpusClock.seconds(96_000) == 2)
        #expect(OpusClock.samples(2) == 96_000)
        #expect(OpusClock.samples(.infinity) == Int64.max / 2)
        #expect(OpusClock.samples(-.infinity) == 0)
        #expect(OpusClock.samples(.nan) == 0)
        #expect(OpusClock.samples(1e300) == 4_000_000_000_000_000_000)
    }

    @Test func aClockTakesNewSettingsAndKeepsItsState() {
        var clock = StreamClock(now: 0)
        _ = clock.step(now: 0.1, queued: 0.5, finite: false)
        let encoded = clock.encoded
        var settings = clock.settings
        settings.maxLead = 3
        clock.update(settings: settings)
        #expect(clock.settings.maxLead == 3 && clock.encoded == encoded)
    }
}

extension StreamClockTests {
    /// Pieces that now and then come later than the allowance: each such gap is bridged with a little silence and
    /// kept as buffer (no audio is dropped for it), so later gaps of the same size need none.
    @Test func lateSpikesAreBridgedAndBecomeBuffer() {
        var sim = ClockSimulation()
        var generator = SplitMix64(seed: 9)
        var source = 0.0
        var t = 0.0
        var nextArrival = 0.1
        var silenceAfterTenSeconds = 0.0
        while t < 120 {
            sim.now = 1_000 + t
            if t >= nextArrival {
                sim.deliver(source: source, seconds: 0.1)
                source += 0.1
                nextArrival = source + 0.1 + (generator.next() % 20 == 0 ? 0.45 : 0.05)
            }
            sim.step()
            if t < 10 { silenceAfterTenSeconds = sim.clock.silenceSeconds }
            t += 0.02
        }
        #expect(sim.clock.droppedSeconds == 0)
        #expect(silenceAfterTenSeconds > 0)
        #expect(sim.clock.silenceSeconds - silenceAfterTenSeconds < 0.5)
    }
}
