import Foundation
import RadioRelaySystem

/// A DJ account's `hours` in its `timezone`: when the DJ may go on the air, as local wall-clock times in a named
/// (IANA) time zone. A pure value of the wall-clock time it is asked about (tests: `AirHoursTests`, on virtual time).
///
/// `hours = Mon-Fri 20:00-23:00, Sat 10:00-12:00, Sun 22:00-02:00`: windows separated by commas, each `DAYS FROM-TO`.
/// DAYS is a day (`Mon` … `Sun`, any case), a range of days (`Mon-Fri`; `Fri-Mon` wraps over the week's end) or
/// `daily`; FROM and TO are `HH:MM`, TO up to `24:00`. A window whose TO is not after its FROM crosses midnight: it
/// starts on each of its days and ends on the next one (`Sun 22:00-02:00` ends on Monday at 02:00). Times are the
/// zone's local times, read through Foundation's `Calendar`: on the day the clocks go forward a window inside the
/// skipped hour is empty and one across it is an hour shorter (Europe/Berlin, 2026-03-29, 02:00-03:00 never comes);
/// on the day they go back the repeated hour is inside the window both times (2026-10-25, 02:00-03:00 lasts two
/// hours). The hours decide whether a DJ may connect; a set that runs past its end goes on.
package struct AirHours: Sendable, Equatable, CustomStringConvertible {
    /// One `DAYS FROM-TO`.
    package struct Window: Sendable, Equatable {
        /// The days it starts on, a bit per day: bit 0 Monday … bit 6 Sunday.
        package var days: UInt8
        /// Minutes from local midnight: `start` in 0..<1440, `end` in 1...1440; `end <= start` ends the next day.
        package var start: Int
        package var end: Int

        package init(days: UInt8, start: Int, end: Int) {
            self.days = days
            self.start = start
            self.end = end
        }

        /// Whether local `minute` of day `day` (0 Monday … 6 Sunday) is inside.
        func contains(day: Int, minute: Int) -> Bool {
            let starts = days & (1 << day) != 0
            if end > start { return starts && minute >= start && minute < end }
            let startedYesterday = days & (1 << ((day + 6) % 7)) != 0
            return (starts && minute >= start) || (startedYesterday && minute < end)
        }
    }

    package var windows: [Window]
    package var timeZone: TimeZone
    /// The hours as written (normalised: one space after each comma), for messages and logs.
    package var text: String

    /// At most this many windows, and this many bytes of text.
    package static let maxWindows = 64
    package static let maxBytes = 1024
    package static let accepts =
        "windows such as Mon-Fri 20:00-23:00, Sat 10:00-12:00 (days Mon … Sun, a range or daily; HH:MM-HH:MM, "
        + "crossing midnight when the end is not after the start)"
    package static let zoneAccepts = "an IANA time zone such as Europe/Berlin or UTC (default UTC)"

    package init(windows: [Window], timeZone: TimeZone, text: String) {
        self.windows = windows
        self.timeZone = timeZone
        self.text = text
    }

    package var description: String { "\(text) (\(timeZone.identifier))" }

    /// Whether the wall-clock time `seconds` (Unix) is inside one of the windows, in the zone's local time.
    package func contains(_ seconds: Double) -> Bool {
        guard seconds.isFinite, abs(seconds) < 1e12 else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.weekday, .hour, .minute], from: Date(timeIntervalSince1970: seconds))
        guard let weekday = parts.weekday, let hour = parts.hour, let minute = parts.minute else { return false }
        // Foundation counts 1 Sunday … 7 Saturday; the windows 0 Monday … 6 Sunday.
        let day = (weekday + 5) % 7
        return windows.contains { $0.contains(day: day, minute: hour * 60 + minute) }
    }

    /// A time zone by its IANA name (the system's tzdata), or nil: names of `A-Z a-z 0-9 / _ + -`, at most 64 bytes.
    package static func zone(_ name: String) -> TimeZone? {
        guard (1...64).contains(name.utf8.count),
            name.utf8.allSatisfy({ byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "_"), UInt8(ascii: "+"),
                    UInt8(ascii: "-"):
                    true
                default: false
                }
            })
        else { return nil }
        return TimeZone(identifier: name)
    }

    /// The windows of an `hours` value and its text normalised, or why it is not one (the message quotes the window
    /// at fault).
    package static func windows(_ text: String) -> Result<(windows: [Window], text: String), HoursProblem> {
        guard text.utf8.count <= maxBytes else { return .failure(HoursProblem("longer than \(maxBytes) bytes")) }
        let items = Array(text.utf8).split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard items.count <= maxWindows else { return .failure(HoursProblem("more than \(maxWindows) windows")) }
        var windows: [Window] = []
        var shownItems: [String] = []
        for item in items {
            let words = item.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 })
            let shown = String(decoding: Array(words.joined(separator: [0x20])), as: UTF8.self)
            guard words.count == 2, let days = days(words[0]), let (start, end) = times(words[1]) else {
                let what = shown.isEmpty ? "an empty window" : "\"\(Sanitized.text(shown, limit: 64))\""
                return .failure(HoursProblem("\(what) is not DAYS HH:MM-HH:MM"))
            }
            guard start != end else {
                return .failure(
                    HoursProblem("\"\(shown)\" starts and ends at the same time: use 00:00-24:00 for a whole day"))
            }
            windows.append(Window(days: days, start: start, end: end))
            shownItems.append(shown)
        }
        return .success((windows, shownItems.joined(separator: ", ")))
    }

    package struct HoursProblem: Error, Equatable {
        package let message: String
        init(_ message: String) { self.message = message }
    }

    private static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// `Mon`, `Mon-Fri` (wrapping), `daily`: a bit per day.
    private static func days(_ word: ArraySlice<UInt8>) -> UInt8? {
        let lower = String(decoding: word.map { $0 | 0x20 }, as: UTF8.self)
        if lower == "daily" { return 0x7F }
        let parts = lower.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let first = dayNames.firstIndex(of: String(parts[0])),
            let last = dayNames.firstIndex(of: String(parts[parts.count - 1]))
        else { return nil }
        var mask: UInt8 = 0
        var day = first
        while true {
            mask |= 1 << day
            if day == last { return mask }
            day = (day + 1) % 7
        }
    }

    /// `HH:MM-HH:MM`: minutes from midnight (the end may be `24:00`).
    private static func times(_ word: ArraySlice<UInt8>) -> (Int, Int)? {
        let parts = word.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard parts.count == 2, let start = minutes(parts[0]), start < 1440, let end = minutes(parts[1]), end > 0
        else { return nil }
        return (start, end)
    }

    /// `HH:MM` (two digits each) up to `24:00`.
    private static func minutes(_ bytes: ArraySlice<UInt8>) -> Int? {
        let digits = Array(bytes)
        guard digits.count == 5, digits[2] == UInt8(ascii: ":") else { return nil }
        var values: [Int] = []
        for pair in [digits[0...1], digits[3...4]] {
            guard pair.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            values.append(Int(pair[pair.startIndex] - 0x30) * 10 + Int(pair[pair.startIndex + 1] - 0x30))
        }
        let (hour, minute) = (values[0], values[1])
        guard minute < 60, hour < 24 || (hour == 24 && minute == 0) else { return nil }
        return hour * 60 + minute
    }
}
