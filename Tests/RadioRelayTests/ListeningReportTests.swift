import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `ListeningReport` as a pure value: its figures for a made-up audience against the same figures worked out second
/// by second (`SyntheticAudience.expected`), and its rules one by one on small hand-made cases.
@Suite struct ListeningReportTests {
    /// The lines a tally would keep of the audience, made directly (no text, no parsing).
    static func lines(_ audience: SyntheticAudience) throws -> [ListenedLine] {
        try audience.sessions.flatMap { session in
            let run = try #require(UInt32(session.run, radix: 16))
            return session.stints.map { stint in
                ListenedLine(
                    mount: stint.mount, listener: ListenerKey(address: session.address, userAgent: session.userAgent),
                    session: session.id.map { SessionKey(run: run, id: $0) }, leave: stint.end,
                    seconds: stint.end - stint.start, isEdge: session.isEdge)
            }
        }
    }

    static func figures(_ row: ListeningReport.Figures) -> SyntheticAudience.Expected {
        var expected = SyntheticAudience.Expected()
        expected.sessions = row.sessions
        expected.unique = row.uniqueListeners
        expected.seconds = row.listeningSeconds
        expected.median = row.medianSeconds
        expected.mean = row.meanSeconds
        expected.peak = row.peakListeners
        expected.peakAt = row.peakAt
        expected.hours = row.hourSeconds
        expected.probes = row.probes
        expected.edges = row.edges
        return expected
    }

    /// Every row and the total equal the second-by-second figures, for several audiences, thresholds and groupings
    /// (a station's mounts as one row, where a moved listener is one session).
    @Test(arguments: [
        (UInt64(1), Int64(5), false), (2, 5, true), (3, 0, false), (4, 60, true), (5, 1, false),
    ])
    func figuresMatchASecondBySecondCount(seed: UInt64, minSeconds: Int64, byStation: Bool) throws {
        // 2026-12-02 00:00:00 UTC, three days.
        let audience = SyntheticAudience(seed: seed, count: 400, from: 1_796_169_600, days: 3)
        let stations = byStation ? ["/jazz.opus": "jazz", "/jazz.mp3": "jazz", "/jazz/": "jazz"] : [:]
        let report = ListeningReport(
            lines: try Self.lines(audience), options: .init(minSeconds: minSeconds, stations: stations))
        let expected = audience.expected(minSeconds: minSeconds, stations: stations)
        #expect(Set(report.groups.map(\.name)) == Set(expected.rows.keys))
        #expect(report.groups.map(\.name) == report.groups.map(\.name).sorted())
        for row in report.groups {
            #expect(Self.figures(row) == expected.rows[row.name], "\(row.name)")
        }
        #expect(Self.figures(report.total) == expected.total)
        #expect(report.total.hourSeconds.reduce(0, +) == report.total.listeningSeconds)
        // The audience has what the rules are about.
        #expect(expected.total.probes > 0 || minSeconds == 0)
        #expect(expected.total.edges > 0 && expected.total.peak > 1)
        #expect(audience.sessions.contains { $0.stints.count == 2 })
    }

    /// A listener moved between mounts: one session (and one listener) in the total, a session on each mount, its
    /// time on each; the total's time is the mounts' sum and its length the sum of its lines.
    @Test func aMovedListenerIsOneSessionInTheTotalAndListensOnEachMount() {
        let key = ListenerKey(address: "10.0.0.1", userAgent: "VLC")
        let moved = SessionKey(run: 1, id: 7)
        let lines = [
            ListenedLine(mount: "/a.opus", listener: key, session: moved, leave: 1_000, seconds: 600),
            ListenedLine(mount: "/b.opus", listener: key, session: moved, leave: 1_300, seconds: 300),
            ListenedLine(
                mount: "/b.opus", listener: ListenerKey(address: "10.0.0.2", userAgent: "VLC"),
                session: SessionKey(run: 1, id: 8), leave: 1_200, seconds: 1_000),
        ]
        let report = ListeningReport(lines: lines)
        #expect(report.groups.map(\.sessions) == [1, 2])
        #expect(report.groups.map(\.listeningSeconds) == [600, 1_300])
        #expect(report.total.sessions == 2 && report.total.uniqueListeners == 2)
        #expect(report.total.listeningSeconds == 1_900)
        // Lengths 900 (600 + 300) and 1 000: the lower middle.
        #expect(report.total.medianSeconds == 900 && report.total.meanSeconds == 950)
        // At second 1 000 it leaves /a.opus and joins /b.opus: never two.
        #expect(report.total.peakListeners == 2 && report.total.peakAt == 400)
        // A short stint on a mount counts when the session as a whole is long enough.
        let short = ListeningReport(
            lines: [
                ListenedLine(mount: "/a.opus", listener: key, session: moved, leave: 100, seconds: 90),
                ListenedLine(mount: "/b.opus", listener: key, session: moved, leave: 102, seconds: 2),
            ])
        #expect(short.groups.map(\.sessions) == [1, 1] && short.total.probes == 0)
    }

    /// Probes, edges and lines without an ID; the threshold is on the whole session.
    @Test func probesAndEdgesAreLeftOutAndCounted() {
        func line(_ id: UInt64?, _ seconds: Int64, agent: String = "VLC", edge: Bool = false) -> ListenedLine {
            ListenedLine(
                mount: "/m", listener: ListenerKey(address: "a", userAgent: agent),
                session: id.map { SessionKey(run: 9, id: $0) }, leave: 10_000, seconds: seconds, isEdge: edge)
        }
        let report = ListeningReport(
            lines: [
                line(1, 4), line(2, 5), line(nil, 3), line(nil, 30), line(3, 3_600, agent: "radio-relay/1", edge: true),
            ], options: .init(minSeconds: 5))
        #expect(report.total.sessions == 2 && report.total.probes == 2 && report.total.edges == 1)
        #expect(report.total.listeningSeconds == 35 && report.total.uniqueListeners == 1)
        #expect(report.total.peakListeners == 2 && report.total.peakAt == 9_995)
        let none = ListeningReport(lines: [])
        #expect(none.groups.isEmpty && none.total.sessions == 0 && none.total.peakAt == nil)
        #expect(none.total.meanSeconds == 0 && none.total.medianSeconds == 0)
    }

    /// Hours of day: whole days at once, the rest hour by hour; extreme values saturate and never trap.
    @Test func hoursOfDayAndExtremes() {
        var hours = [Int64](repeating: 0, count: 24)
        // 2 days, 1 hour and 30 s from 23:59:30.
        ListeningReport.addHours(from: 86_400 - 30, to: 86_400 - 30 + 2 * 86_400 + 3_630, into: &hours)
        #expect(hours[23] == 2 * 3_600 + 30 && hours[0] == 2 * 3_600 + 3_600 && hours[1] == 2 * 3_600)
        #expect(hours.reduce(0, +) == 2 * 86_400 + 3_630)
        ListeningReport.addHours(from: 10, to: 5, into: &hours)  // nothing
        #expect(hours.reduce(0, +) == 2 * 86_400 + 3_630)
        // The longest session a line can hold (the year 9999): once, and a million times over.
        let far: Int64 = 253_402_300_799
        let line = ListenedLine(
            mount: "/m", listener: ListenerKey(address: "a", userAgent: "b"), session: nil, leave: far, seconds: far)
        let report = ListeningReport(lines: [ListenedLine](repeating: line, count: 1_000))
        #expect(report.total.listeningSeconds == far * 1_000 && report.total.peakListeners == 1_000)
        #expect(report.total.hourSeconds.reduce(0, +) == far * 1_000 && report.total.peakAt == 0)
        #expect(Int64.max.saturatingAdding(1) == .max && Int64.min.saturatingAdding(-1) == .min)
        #expect(Int64.max.saturatingMultiplied(by: -2) == .min && (Int64(3).saturatingMultiplied(by: 4)) == 12)
        // A line never holds more seconds than the time since 1970, nor fewer than none.
        #expect(ListenedLine(mount: "/m", listener: line.listener, session: nil, leave: 10, seconds: 99).start == 0)
        #expect(ListenedLine(mount: "/m", listener: line.listener, session: nil, leave: 10, seconds: -5).seconds == 0)
    }
}
