import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `LogRateLimit` on virtual time: at most `limit` lines per key per window, then one count.
@Suite struct LogRateLimitTests {
    enum Key: Hashable, Sendable { case refused, moved }

    @Test func theFirstLinesOfAWindowAreWrittenTheRestCounted() {
        var limiter = LogRateLimit<Key>(limit: 3, window: 10)
        let admissions = (0..<6).map { limiter.admit(.refused, now: Double($0) * 0.01) }
        #expect(admissions == [.write, .write, .write, .suppress, .suppress, .suppress])
        #expect(limiter.nextSummary == 10)
    }

    @Test func theNextLineAfterTheWindowCarriesTheCount() {
        var limiter = LogRateLimit<Key>(limit: 2, window: 10)
        for _ in 0..<7 { _ = limiter.admit(.refused, now: 1) }
        let result1 = limiter.admit(.refused, now: 10.9)
        #expect(result1 == .suppress)
        let result2 = limiter.admit(.refused, now: 11)
        #expect(result2 == .writeAfter(suppressed: 6))
        let result3 = limiter.admit(.refused, now: 11)
        #expect(result3 == .write)
        let result4 = limiter.admit(.refused, now: 11)
        #expect(result4 == .suppress)
    }

    @Test func keysAreLimitedApart() {
        var limiter = LogRateLimit<Key>(limit: 1, window: 1)
        let result5 = limiter.admit(.refused, now: 0)
        #expect(result5 == .write)
        let result6 = limiter.admit(.refused, now: 0)
        #expect(result6 == .suppress)
        let result7 = limiter.admit(.moved, now: 0)
        #expect(result7 == .write)
    }

    @Test func summariesComeOncePerKeyWhenItsWindowIsOver() throws {
        var limiter = LogRateLimit<Key>(limit: 1, window: 10)
        for _ in 0..<5 { _ = limiter.admit(.refused, now: 0) }
        for _ in 0..<3 { _ = limiter.admit(.moved, now: 4) }
        let result8 = limiter.summary(now: 9.9)
        #expect(result8 == nil)
        let firstSummary = limiter.summary(now: 10)
        let first = try #require(firstSummary)
        #expect(first.key == .refused && first.suppressed == 4)
        let result9 = limiter.summary(now: 10)
        #expect(result9 == nil)
        #expect(limiter.nextSummary == 14)
        let secondSummary = limiter.summary(now: 20)
        let second = try #require(secondSummary)
        #expect(second.key == .moved && second.suppressed == 2)
        #expect(limiter.nextSummary == nil)
        // Reported by the summary, so the next line carries no count.
        let result10 = limiter.admit(.refused, now: 30)
        #expect(result10 == .write)
    }

    /// A storm of 10 000 refusals in 1 s, then quiet: 10 lines and one count.
    @Test func aStormLeavesABoundedNumberOfLines() {
        var limiter = LogRateLimit<Key>(limit: 10, window: 10)
        var written = 0
        for i in 0..<10_000 where limiter.admit(.refused, now: Double(i) / 10_000) != .suppress { written += 1 }
        #expect(written == 10)
        var counts: [Int] = []
        var now = 0.0
        while now < 60 {
            while let summary = limiter.summary(now: now) { counts.append(summary.suppressed) }
            now += 0.5
        }
        #expect(counts == [9_990])
    }
}
