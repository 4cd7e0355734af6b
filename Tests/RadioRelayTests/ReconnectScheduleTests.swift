import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// An upstream's reconnect schedule (`ReconnectSchedule`): decorrelated jitter up to the cap, the reset after a stable
/// minute, delays from a reload, and a crowd spread out.
@Suite struct ReconnectScheduleTests {
    @Test func reconnectDelaysGrowWithJitterToTheCapAndResetAfterAStableMinute() {
        var schedule = ReconnectSchedule(delays: 1...30)
        #expect(schedule.isDue(now: 0))
        // The top of each draw: 1, 3, 9, 27, then the cap.
        var now = 100.0
        var waits: [Double] = []
        for _ in 0..<6 {
            let wait = schedule.failed(now: now, random: 1)
            waits.append(wait)
            #expect(!schedule.isDue(now: now + wait - 0.001))
            #expect(schedule.isDue(now: now + wait))
            now += wait
        }
        #expect(waits == [1, 3, 9, 27, 30, 30])
        #expect(schedule.failures == 6)
        // The bottom of each draw is the first delay; a draw in between lies between them.
        #expect(schedule.failed(now: now, random: 0) == 1)
        #expect(schedule.failed(now: now, random: 0.5) == 2)
        #expect(schedule.failed(now: now, random: .nan) == 1)
        // A connection that fails within seconds keeps growing the delay…
        _ = schedule.failed(now: now, random: 1)
        schedule.connected(now: 1_000)
        #expect(schedule.failed(now: 1_005, random: 1) == 9)
        // …one that delivered for a while is retried after the first delay and at most half of it…
        schedule.connected(now: 1_100)
        #expect(schedule.failed(now: 1_130, random: 1) == 1.5)
        #expect(schedule.failed(now: 1_140, random: 1) == 3)
        // …and one that lasted a minute starts again from the first.
        _ = schedule.failed(now: 1_150, random: 1)
        schedule.connected(now: 2_000)
        schedule.connected(now: 2_050)  // later bytes do not move the start
        #expect(schedule.failed(now: 2_060, random: 1) == 1.5)
        #expect(schedule.failed(now: 2_070, random: 1) == 3)
        schedule.again()
        #expect(schedule.isDue(now: 0))
    }

    @Test func newDelaysFromAReloadApplyToTheNextFailure() {
        var schedule = ReconnectSchedule(delays: 1...30)
        for _ in 0..<5 { _ = schedule.failed(now: 0, random: 1) }
        #expect(schedule.previous == 30)
        schedule.update(delays: 2...5)
        #expect(schedule.previous == 5 && schedule.delays == 2...5)
        #expect(schedule.failed(now: 0, random: 1) == 5)
        #expect(schedule.failed(now: 0, random: 0) == 2)
    }

    @Test func jitteredDelaysSpreadACrowd() {
        var generator = SplitMix64(seed: 3)
        var seconds: [Double] = []
        for _ in 0..<100 {
            var schedule = ReconnectSchedule(delays: 1...30)
            for _ in 0..<3 { _ = schedule.failed(now: 0, random: Double(generator.next() % 1000) / 1000) }
            seconds.append(schedule.failed(now: 0, random: Double(generator.next() % 1000) / 1000))
        }
        #expect(Set(seconds.map { Int($0) }).count > 8)
        #expect(seconds.allSatisfy { (1...30).contains($0) })
    }
}

/// A paced upstream's bounded read-ahead (`Backlog`).
@Suite struct BacklogTests {
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
        data.withUnsafeBytes { backlog.append($0) }
        backlog.clear()
        #expect(backlog.isEmpty && backlog.count == 0)
    }
}
