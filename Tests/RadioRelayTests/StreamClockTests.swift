import RadioRelayTestSupport
import Testing

@testable import RadioRelay

/// The stream clock, the reconnect schedule and the paced read-ahead, driven on virtual time: no threads, no sleeps.
@Suite struct StreamClockTests {
    let start = 1_000.0

    @Test func pacedFeedingStopsAtTheLeadAndResumesAsTheClockAdvances() {
        let clock = StreamClock(now: start)
        #expect(clock.ahead(now: start + 2, encoded: 1.5) == -0.5)
        #expect(clock.mayFeed(now: start, encoded: 0.25))
        #expect(!clock.mayFeed(now: start, encoded: 0.26))
        #expect(clock.mayFeed(now: start + 0.02, encoded: 0.26))
        // Virtual time: a steady source fed whenever allowed stays within the lead of the clock, never further.
        var encoded = 0.0
        var now = start
        for _ in 0..<10_000 {
            while clock.mayFeed(now: now, encoded: encoded) { encoded += 0.026 }
            #expect(clock.ahead(now: now, encoded: encoded) <= 0.25 + 0.026)
            now += 0.003
        }
        #expect(abs(encoded - 30 - 0.25) < 0.03)
    }

    @Test func napsOnlyWhenAheadAndNeverLongerThanTheLongestNap() throws {
        let clock = StreamClock(now: start)
        #expect(clock.nap(now: start, encoded: 0.25) == nil)
        #expect(clock.nap(now: start, encoded: 0.1) == nil)
        let short = try #require(clock.nap(now: start, encoded: 0.255))
        #expect(abs(short - 0.006) < 1e-9)
        #expect(clock.nap(now: start, encoded: 60) == 0.021)
    }

    @Test func silenceStartsAfterTheAllowanceAndFillsToHalfOfIt() {
        let clock = StreamClock(now: start)
        #expect(clock.silence(now: start + 10, encoded: 9.5) == 0)
        #expect(clock.silence(now: start + 10, encoded: 9.6) == 0)
        #expect(abs(clock.silence(now: start + 10, encoded: 9.4) - 0.35) < 1e-9)
        // A long outage is filled in bounded steps, each at most a second.
        #expect(clock.silence(now: start + 100, encoded: 10) == 1)
        // Ahead of the clock: nothing.
        #expect(clock.silence(now: start, encoded: 5) == 0)
    }

    @Test func anOutageOnVirtualTimeKeepsTheStreamWithinTheAllowance() {
        let clock = StreamClock(now: start)
        var encoded = 0.0
        var now = start
        var silence = 0.0
        // 10 s of audio at real time, a 20 s outage, then audio again; the loop runs every 10 ms.
        while now < start + 40 {
            let upstreamUp = now < start + 10 || now >= start + 30
            if upstreamUp { encoded = max(encoded, now - start) }
            let fill = clock.silence(now: now, encoded: encoded)
            silence += fill
            encoded += fill
            #expect(clock.ahead(now: now, encoded: encoded) >= -0.5 - 1e-9)
            now += 0.01
        }
        // Filled from half a second into the outage, up to a quarter of a second behind the clock.
        #expect(silence > 19.4 && silence < 19.8)
    }

    @Test func framesNeverTrap() {
        #expect(StreamClock.frames(0.5, rate: 48_000) == 24_000)
        #expect(StreamClock.frames(0.5, rate: 44_100) == 22_050)
        #expect(StreamClock.frames(1e-9, rate: 48_000) == 0)
        #expect(StreamClock.frames(-3, rate: 48_000) == 0)
        #expect(StreamClock.frames(.infinity, rate: 48_000) == 0)
        #expect(StreamClock.frames(.nan, rate: 48_000) == 0)
        #expect(StreamClock.frames(1e300, rate: 48_000) == Int(Int32.max))
    }

    @Test func opusClockConvertsWithoutTrapping() {
        #expect(OpusClock.seconds(96_000) == 2)
        #expect(OpusClock.samples(2) == 96_000)
        #expect(OpusClock.samples(.infinity) == Int64.max / 2)
        #expect(OpusClock.samples(-.infinity) == 0)
        #expect(OpusClock.samples(.nan) == 0)
        #expect(OpusClock.samples(1e300) == 4_000_000_000_000_000_000)
    }

    @Test func reconnectDelaysDoubleToTheCapAndResetOnSuccess() {
        var schedule = ReconnectSchedule(delays: 1...30)
        #expect(schedule.isDue(now: 0))
        var waits: [Double] = []
        var now = 100.0
        for _ in 0..<7 {
            let wait = schedule.failed(now: now)
            waits.append(wait)
            #expect(!schedule.isDue(now: now + wait - 0.001))
            #expect(schedule.isDue(now: now + wait))
            now += wait
        }
        #expect(waits == [1, 2, 4, 8, 16, 30, 30])
        #expect(schedule.failures == 7)
        schedule.connected()
        #expect(schedule.failed(now: now) == 1)
        schedule.again()
        #expect(schedule.isDue(now: 0))
        #expect(schedule.delay == 1)
    }

    @Test func backlogIsBoundedAndConsumedInPieces() throws {
        var backlog = Backlog(limit: 10)
        #expect(backlog.isEmpty && !backlog.isFull)
        let data: [UInt8] = Array(0..<25)
        data.withUnsafeBytes { backlog.append($0) }
        #expect(backlog.isFull && backlog.count == 25)
        var seen: [UInt8] = []
        backlog.consume(upTo: 4) { seen += $0 }
        backlog.compact()
        #expect(seen == [0, 1, 2, 3] && backlog.count == 21)
        struct Boom: Error {}
        // A piece is consumed even when its handler throws: a bad piece cannot block the read-ahead.
        #expect(throws: Boom.self) { try backlog.consume(upTo: 8) { _ in throw Boom() } }
        #expect(backlog.count == 13)
        backlog.compact()  // more than `limit` consumed: the front is given back
        backlog.consume(upTo: 100) { seen += $0 }
        #expect(seen == [0, 1, 2, 3] + Array(12..<25))
        backlog.consume(upTo: 100) { _ in Issue.record("nothing is left") }
        backlog.compact()
        #expect(backlog.isEmpty)
    }
}
