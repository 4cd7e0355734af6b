import Testing

@testable import RadioRelayNet

/// Listener statistics on virtual time: peaks since start and over the last hour, session lengths by bucket, and
/// the seconds listened, exact for known sessions.
@Suite struct ListenerStatisticsTests {
    @Test func knownSessionsGiveExactFigures() {
        var statistics = ListenerStatistics()
        // Three listeners: 0–5 s, 0–70 s, 10–4 000 s; a fourth 4 100–4 105 s.
        statistics.joined(at: 0)
        statistics.joined(at: 0)
        statistics.joined(at: 10)
        #expect(statistics.current == 3 && statistics.peak == 3)
        #expect(statistics.listeningSeconds(now: 20) == 20 + 20 + 10)
        statistics.left(joinedAt: 0, at: 5)
        statistics.left(joinedAt: 0, at: 70)
        #expect(statistics.listeningSeconds(now: 100) == 5 + 70 + 90)
        #expect(statistics.peakLastHour(now: 100) == 3)
        statistics.left(joinedAt: 10, at: 4_000)
        statistics.joined(at: 4_100)
        statistics.left(joinedAt: 4_100, at: 4_105)
        #expect(statistics.current == 0 && statistics.peak == 3 && statistics.sessions == 4)
        #expect(statistics.endedSeconds == 5 + 70 + 3_990 + 5)
        #expect(statistics.listeningSeconds(now: 9_999) == 4_070)
        // Buckets: ≤ 10 s: two; ≤ 300 s: the 70 s one; ≤ 14 400 s: the 3 990 s one.
        #expect(statistics.buckets == [2, 0, 1, 0, 0, 0, 1, 0, 0])
        // The last hour at 4 105 s: the three were together in minute 0, long gone; one listener at a time since.
        #expect(statistics.peakLastHour(now: 3_659) == 3 && statistics.peakLastHour(now: 3_720) == 1)
        #expect(statistics.peakLastHour(now: 4_105) == 1)
        // An hour after 4 000 s, the fourth listener alone; an hour after it left, nobody.
        #expect(statistics.peakLastHour(now: 4_000 + 3_660) == 1)
        #expect(statistics.peakLastHour(now: 4_105 + 3_700) == 0)
    }

    @Test func listenersCarriedIntoQuietMinutesCountInTheHour() {
        var statistics = ListenerStatistics()
        for _ in 0..<5 { statistics.joined(at: 30) }
        // Nobody joins or leaves for two hours: the five are still the last hour's peak.
        #expect(statistics.peakLastHour(now: 7_230) == 5)
        statistics.left(joinedAt: 30, at: 7_230)
        #expect(statistics.peakLastHour(now: 7_231) == 5)
        #expect(statistics.peakLastHour(now: 7_230 + 3_700) == 4)
        #expect(statistics.listeningSeconds(now: 7_330) == 7_200 + 4 * 7_300)
    }

    @Test func aLeaveWithoutAJoinAndNonsenseTimesChangeNothing() {
        var statistics = ListenerStatistics()
        statistics.left(joinedAt: 0, at: 5)
        statistics.joined(at: .nan)
        statistics.joined(at: .infinity)
        #expect(statistics == ListenerStatistics())
        statistics.joined(at: 1)
        statistics.left(joinedAt: 1, at: 0.5)  // a clock that went back: a session of 0 s
        #expect(statistics.buckets[0] == 1 && statistics.endedSeconds == 0)
        // A year of minutes is still one entry per minute of the last hour.
        for minute in 0..<525_600 where minute % 1_000 == 0 {
            statistics.joined(at: Double(minute) * 60)
            statistics.left(joinedAt: Double(minute) * 60, at: Double(minute) * 60 + 1)
        }
        #expect(statistics.peakLastHour(now: 525_600 * 60) == 0 && statistics.sessions == 527)
    }
}
