import Foundation
import Testing

@testable import RadioRelayNet

/// A DJ account's hours on virtual time: local wall-clock windows in a named zone, across midnight, across the week's
/// end, and on the days the clocks change (Europe/Berlin, 2026-03-29 forward and 2026-10-25 back).
@Suite struct AirHoursTests {
    static func hours(_ text: String, _ zone: String = "UTC") throws -> AirHours {
        let parsed = try AirHours.windows(text).get()
        return AirHours(windows: parsed.windows, timeZone: try #require(AirHours.zone(zone)), text: parsed.text)
    }

    /// Unix seconds of a UTC time `2026-03-29T01:00:00`.
    static func utc(_ text: String) throws -> Double {
        let formatter = ISO8601DateFormatter()
        return try #require(formatter.date(from: text + "Z")).timeIntervalSince1970
    }

    /// Minutes inside `hours` from `from` (UTC) for `minutes` minutes, a minute at a time.
    static func minutesInside(_ hours: AirHours, from: String, minutes: Int) throws -> Int {
        let start = try utc(from)
        return (0..<minutes).filter { hours.contains(start + Double($0) * 60) }.count
    }

    @Test func windowsOfTheWeek() throws {
        let evenings = try Self.hours("Mon-Fri 20:00-23:00, Sat 10:00-12:00")
        #expect(evenings.text == "Mon-Fri 20:00-23:00, Sat 10:00-12:00")
        #expect(evenings.contains(try Self.utc("2026-12-04T20:00:00")), "Friday 20:00")
        #expect(evenings.contains(try Self.utc("2026-12-04T22:59:59")))
        #expect(!evenings.contains(try Self.utc("2026-12-04T23:00:00")), "the end is outside")
        #expect(!evenings.contains(try Self.utc("2026-12-04T19:59:59")))
        #expect(evenings.contains(try Self.utc("2026-12-05T11:00:00")), "Saturday 11:00")
        #expect(!evenings.contains(try Self.utc("2026-12-05T20:30:00")), "not on Saturday evening")
        #expect(!evenings.contains(try Self.utc("2026-12-06T20:30:00")), "nor on Sunday")
        // A range of days wraps over the week's end; `daily` is every day.
        let weekend = try Self.hours("fri-MON 08:00-09:00")
        for (day, inside) in [("2026-12-04", true), ("2026-12-06", true), ("2026-12-07", true), ("2026-12-09", false)] {
            #expect(weekend.contains(try Self.utc(day + "T08:30:00")) == inside, "\(day)")
        }
        let daily = try Self.hours("daily 00:00-24:00")
        #expect(try Self.minutesInside(daily, from: "2026-12-01T00:00:00", minutes: 7 * 1440) == 7 * 1440)
        #expect(!daily.contains(.nan) && !daily.contains(.infinity))
    }

    /// A window whose end is not after its start ends the next day: Sunday's late show ends on Monday.
    @Test func aWindowCrossingMidnight() throws {
        let late = try Self.hours("Sun 22:00-02:00")
        #expect(!late.contains(try Self.utc("2026-12-06T21:59:00")))
        #expect(late.contains(try Self.utc("2026-12-06T22:00:00")), "Sunday 22:00")
        #expect(late.contains(try Self.utc("2026-12-07T01:59:00")), "Monday 01:59, in Sunday's window")
        #expect(!late.contains(try Self.utc("2026-12-07T02:00:00")))
        #expect(!late.contains(try Self.utc("2026-12-07T22:30:00")), "not Monday's own night")
        #expect(!late.contains(try Self.utc("2026-12-06T01:00:00")), "Sunday 01:00 belongs to Saturday's night")
        #expect(try Self.minutesInside(late, from: "2026-12-06T00:00:00", minutes: 2 * 1440) == 240)
    }

    /// Local times in the zone: on 2026-03-29 Berlin's clocks jump from 02:00 to 03:00, on 2026-10-25 from 03:00 back
    /// to 02:00.
    @Test func theDaysTheClocksChange() throws {
        let zone = "Europe/Berlin"
        // Winter (UTC+1): Friday 20:00 in Berlin is 19:00 UTC.
        let evening = try Self.hours("Fri 20:00-21:00", zone)
        #expect(evening.contains(try Self.utc("2026-12-04T19:00:00")))
        #expect(!evening.contains(try Self.utc("2026-12-04T20:00:00")))
        let skipped = try Self.hours("Sun 02:00-03:00", zone)
        #expect(
            try Self.minutesInside(skipped, from: "2026-03-28T22:00:00", minutes: 360) == 0, "02:00-03:00 never comes")
        let across = try Self.hours("Sun 01:00-04:00", zone)
        #expect(try Self.minutesInside(across, from: "2026-03-28T22:00:00", minutes: 360) == 120, "an hour shorter")
        #expect(across.contains(try Self.utc("2026-03-29T00:00:00")), "01:00 CET")
        #expect(across.contains(try Self.utc("2026-03-29T01:00:00")), "03:00 CEST")
        #expect(!across.contains(try Self.utc("2026-03-29T02:00:00")), "04:00 CEST")
        let repeated = try Self.hours("Sun 02:00-03:00", zone)
        #expect(try Self.minutesInside(repeated, from: "2026-10-24T22:00:00", minutes: 360) == 120, "02:00 comes twice")
        #expect(try Self.minutesInside(across, from: "2026-10-24T22:00:00", minutes: 360) == 240, "an hour longer")
        // Across midnight on the night the clocks go forward: Saturday 23:00 CET to Sunday 01:00 CET.
        let night = try Self.hours("Sat 23:00-01:00", zone)
        #expect(try Self.minutesInside(night, from: "2026-03-28T20:00:00", minutes: 360) == 120)
        // Summer (UTC+2): the same local window is an hour earlier in UTC.
        let summer = try Self.hours("Mon-Fri 20:00-23:00", zone)
        #expect(summer.contains(try Self.utc("2026-07-01T18:00:00")))
        #expect(!summer.contains(try Self.utc("2026-07-01T21:00:00")))
    }

    @Test func whatIsNotAnHoursValue() {
        for text in [
            "", "Mon", "20:00-23:00", "Mon 20:00", "Mon 20-23", "Mon 20:00-23:00 extra", "Mon-Tue-Wed 20:00-21:00",
            "Mo 20:00-21:00", "Mon 24:00-01:00", "Mon 20:60-21:00", "Mon 20:00-24:01", "Mon 00:00-00:00",
            "Mon 10:00-10:00", "Mon 20:00-23:00,", "Mon 2:00-3:00", "Mön 20:00-21:00", "Mon 20:00-21:00, , Tue 1",
        ] {
            guard case .failure(let problem) = AirHours.windows(text) else {
                Issue.record("\(text) was taken")
                continue
            }
            #expect(!problem.message.isEmpty)
        }
        let many = Array(repeating: "Mon 01:00-02:00", count: AirHours.maxWindows + 1).joined(separator: ",")
        #expect((try? AirHours.windows(many).get()) == nil)
        if case .failure(let problem) = AirHours.windows("Mon 10:00-10:00") {
            #expect(
                problem.message
                    == "\"Mon 10:00-10:00\" starts and ends at the same time: use 00:00-24:00 for a whole day")
        }
        if case .failure(let problem) = AirHours.windows("Mon 20:00-23:00, Tuesday 10:00-11:00") {
            #expect(problem.message == "\"Tuesday 10:00-11:00\" is not DAYS HH:MM-HH:MM")
        }
        for zone in ["Europe/Berlin", "UTC", "America/Argentina/Buenos_Aires", "Etc/GMT+5"] {
            #expect(AirHours.zone(zone) != nil, "\(zone)")
        }
        for zone in ["", "Mars/Olympus", "Europe/Berlin ", "../etc/passwd", String(repeating: "A", count: 65)] {
            #expect(AirHours.zone(zone) == nil, "\(zone)")
        }
    }
}
