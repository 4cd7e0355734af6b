import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// When a listener's writes are due, on the fake ring of `ListenerScheduleTests` and virtual time: after three
/// quarters of the flush interval once a page waits, a backed-up listener looked at again only when its lag crosses
/// a line, what counts as pending, and how long the loop sleeps.
@Suite struct ListenerWriteTimingTests: ListenerScheduleFixture {
    typealias FakeRing = ListenerScheduleTests.FakeRing

    @Test func writesFollowPagesAfterThreeQuartersOfTheInterval() {
        var ring = FakeRing(pages: 10)
        var state = caughtUp(at: 9, lastFlush: 100)
        #expect(schedule.due(state, now: 100.2, window: ring) == .at(100.6))  // a page waits: fallback at 2×
        ring.publish(1)
        // 200 ms of audio since its last write: not its turn, however late the clock (a page came late)...
        #expect(schedule.due(state, now: 100.5, window: ring) == .at(100.6))
        ring.publish(1, granules: 1_200)
        #expect(schedule.due(state, now: 100.21, window: ring) == .now)  // ...225 ms, ¾ of it: however early
        schedule.wrote(&state, now: 100.3, window: ring)
        #expect(state.writtenAt == 54_000 && state.lastFlush == 100.3)  // in turn: it counts from the newest page
        ring.publish(1, granules: 6_000)
        state.cursor = ring.head
        #expect(schedule.due(state, now: 100.4, window: ring) == .idle)  // 125 ms of audio, nothing waits
        ring.publish(1)
        #expect(schedule.due(state, now: 100.5, window: ring) == .now)  // 225 ms
        ring.publish(10)
        schedule.wrote(&state, now: 101.5, window: ring)
        // A whole interval late and more (a burst after a stall): it keeps its phase, whole intervals after 54 000.
        #expect(state.writtenAt == 54_000 + 4 * 14_400)
        ring.publish(1)
        schedule.wrote(&state, now: 101.55, window: ring)
        #expect(state.writtenAt == 54_000 + 4 * 14_400)  // out of turn (a backed-up socket drained): the turn stays
        state.cursor = ring.head
        #expect(schedule.due(state, now: 101.5, window: ring) == .idle)
        state.backedUp = true
        #expect(schedule.due(state, now: 100.01, window: ring) == .now)  // backed up: when looked at, at once
        #expect(schedule.due(ListenerState(), now: 0, window: ring) == .now)  // never written: at once
    }

    /// Timeline positions anywhere in Int64 (a stream's timeline grows with its audio, but nothing here may trap):
    /// a jump of nearly 2^63 granules, one back, and intervals of 0, 300 ms and 2 s.
    @Test func turnsNeverTrapOnAnyTimeline() {
        for interval in [0, 0.3, 2] {
            let schedule = ListenerSchedule(flushInterval: interval, maxLag: 10, burst: 2)
            var ring = FakeRing(pages: 2)
            var state = caughtUp(at: 2)
            ring.publish(1, granules: Int64.max - 20_000)
            #expect(schedule.due(state, now: 1, window: ring) == .now)
            schedule.wrote(&state, now: 1, window: ring)
            #expect(state.writtenAt <= ring.timelines.last ?? 0 && state.writtenAt > 9_600)
            var back = caughtUp(at: 2)
            back.writtenAt = Int64.max
            #expect(schedule.due(back, now: 1, window: FakeRing(pages: 2)) == .now)  // the timeline went back
            schedule.wrote(&back, now: 1, window: FakeRing(pages: 2))
            #expect(back.writtenAt == 9_600)
        }
    }

    /// A backed-up listener is looked at again when its lag would cross the next line at the stream's pace: maxLag,
    /// then (not moved yet, mid-page) twice it; past its last line, or overtaken, after the floor.
    @Test func aBackedUpListenerIsLookedAtWhenItsLagCrossesALine() {
        var ring = FakeRing(pages: 100)
        var state = caughtUp(at: 70)  // 2.9 s behind
        state.backedUp = true
        #expect(abs(schedule.recheck(state, now: 50, window: ring) - (50 + 7.1 + 0.1)) < 1e-9)
        ring.publish(150)  // 250 pages: 17.9 s behind
        #expect(abs(schedule.recheck(state, now: 50, window: ring) - (50 + 2.1 + 0.1)) < 1e-9)
        state.moved = true  // dropped at its next look: at once
        #expect(abs(schedule.recheck(state, now: 50, window: ring) - (50 + 0.2)) < 1e-9)
        var overtaken = FakeRing(pages: 300, capacity: 100)
        overtaken.publish(0)
        #expect(abs(schedule.recheck(caughtUp(at: 50), now: 50, window: overtaken) - (50 + 0.2)) < 1e-9)
        #expect(schedule.recheck(ListenerState(), now: 0, window: FakeRing()) == 10.1)  // nothing yet: maxLag on
    }

    /// A listener that stops reading for good, on virtual time with a page every 100 ms: looked at only when its
    /// lag crosses a line — moved to the live edge once past 10 s, dropped once 10 s behind again — not at each of
    /// the 200 publications (the loop used to try a `sendmsg` on it at every one).
    @Test func aStalledListenerIsLookedAtTwiceInTwentySeconds() {
        var ring = FakeRing(pages: 30, capacity: 400)
        var state = caughtUp(at: 30)
        state.backedUp = true
        var due = schedule.recheck(state, now: 3, window: ring)
        var looks: [(at: Double, action: String)] = []
        for tick in 31...260 {
            let now = Double(tick) * 0.1
            ring.publish(1)
            guard now >= due else { continue }
            switch schedule.plan(&state, now: now, window: ring) {
            case .write: looks.append((now, "write"))
            case .moved: looks.append((now, "moved"))
            case .drop, .end: looks.append((now, "drop"))
            }
            if looks.last?.action == "drop" { break }
            due = schedule.recheck(state, now: now, window: ring)
        }
        // Lag grows a page at a time: a look that finds it just at the line writes nothing and comes again 0.1 s on.
        #expect(looks.filter { $0.action != "write" }.map(\.action) == ["moved", "drop"], "\(looks)")
        #expect(looks.count <= 4, "\(looks)")
        #expect(looks.first { $0.action == "moved" }.map { (13.0...13.3).contains($0.at) } == true, "\(looks)")
        #expect(looks.last.map { (23.0...23.5).contains($0.at) } == true, "\(looks)")
    }

    @Test func pendingCountsHeadersAndPages() {
        let ring = FakeRing(pages: 10)
        var state = caughtUp(at: 10)
        #expect(!schedule.hasPending(state, ring))
        state.headersSent = 1
        #expect(schedule.hasPending(state, ring))
        var fresh = ListenerState()
        fresh.headersSent = 2
        #expect(schedule.hasPending(fresh, ring))
        #expect(!schedule.hasPending(fresh, FakeRing(pages: 0)))
        let everyPage = ListenerSchedule(flushInterval: 0, maxLag: 10, burst: 2)
        #expect(everyPage.due(caughtUp(at: 10, lastFlush: 5), now: 5, window: ring) == .now)
    }

    @Test func theLoopSleepsUntilTheEarliestDeadlineWithinBounds() {
        #expect(ListenerSchedule.waitMilliseconds(until: nil, now: 10) == 500)
        #expect(ListenerSchedule.waitMilliseconds(until: 10.1234, now: 10) == 124)
        #expect(ListenerSchedule.waitMilliseconds(until: 9, now: 10) == 0)
        #expect(ListenerSchedule.waitMilliseconds(until: 11, now: 10) == 500)
        #expect(ListenerSchedule.waitMilliseconds(until: -.infinity, now: 10) == 0)
        #expect(ListenerSchedule.waitMilliseconds(until: .infinity, now: 10) == 500)
        #expect(ListenerSchedule.waitMilliseconds(until: .nan, now: 10) == 0)
        #expect(ListenerSchedule.waitMilliseconds(until: 10.2, now: 10, cap: 50) == 50)
    }
}

/// When a listener is written, against pages published on the MP3 frame grid (an upstream's 1152-sample frames at
/// 44.1 kHz, 26.12 ms, each completing a 20 ms page or so): with a flush interval, a write waits for the first
/// publication that brings ¾ of the interval of audio since the last write, so audio that completes a page just after
/// a write waits up to the interval; with `--flush-ms 0`, every publication is written at once.
@Suite struct ListenerWriteScheduleTests {
    /// Waits, in publications, between the page holding each 1-second marker and the write that sends it, over
    /// `seconds` of publications every 26.12 ms, for a listener whose first write is at the first one from `join` on.
    static func waits(flush: Double, join: Double, seconds: Double = 12) -> [Int] {
        let schedule = ListenerSchedule(flushInterval: flush, maxLag: 10, burst: 2)
        var ring = ListenerScheduleTests.FakeRing(pages: 1)
        ring.pageGranules = 1254  // a frame's 1152 samples at 44.1 kHz, in 48 kHz granules
        var state = ListenerState()
        let frame = 1152.0 / 44_100
        var writes: [Int] = []
        var index = 0
        while Double(index) * frame < seconds {
            index += 1
            let now = Double(index) * frame
            ring.publish(1)
            guard now >= join else { continue }
            if schedule.due(state, now: now, window: ring) == .now {
                schedule.wrote(&state, now: now, window: ring)
                writes.append(index)
            }
        }
        // The marker at second k is in the page published first at or after k s; it waits for the next write.
        return (Int(join.rounded(.up))..<Int(seconds)).compactMap { second in
            let published = Int((Double(second) / frame).rounded(.up))
            return writes.first { $0 >= published }.map { $0 - published }
        }
    }

    @Test func flushZeroWritesEveryPublicationAtOnce() {
        for join in [0.3, 2.0] { #expect(Self.waits(flush: 0, join: join).allSatisfy { $0 == 0 }) }
    }

    /// With the default 300 ms interval the waits make the sawtooth reported from a run said to be low-latency:
    /// writes every 9 frames (235 ms) against 38.28 frames a second, so each 1-second marker waits about 2.3 frames
    /// less than the one before and the wait wraps every ~4 s: 0, 7, 5, 2 frames, which with the 53 ms any marker
    /// takes are exactly the reported 53, 236, 184, 105 ms. It is the write schedule of a 300 ms flush interval, not
    /// held pages: with `--flush-ms 0` there is none (above).
    @Test func aFlushIntervalMakesTheFourSecondSawtooth() {
        let waits = Self.waits(flush: 0.3, join: 0.3)
        // In ms, plus the 53 ms a marker takes with no wait (20 ms page, a decoder frame, the encoder's lookahead).
        let frame = 1152.0 / 44.1
        #expect(waits.prefix(4).map { Int((Double($0) * frame).rounded()) + 53 } == [53, 236, 184, 105])
        for index in 4..<waits.count { #expect(abs(waits[index] - waits[index - 4]) <= 1, "a 4-second period") }
    }
}
