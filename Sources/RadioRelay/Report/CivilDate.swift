/// Dates of the proleptic Gregorian calendar as days since 1970-01-01, in integer arithmetic (no `timegm`, no time
/// zone, no locale): what the access log's times are read with.
enum CivilDate {
    /// The months' names, three bytes each packed in an integer.
    private static let months: [UInt32] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .map { packed(Array($0.utf8)[...]) }

    private static func packed(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// 1 … 12 for the common log format's month (`Dec`), nil for anything else.
    static func month(_ name: ArraySlice<UInt8>) -> Int64? {
        guard name.count == 3 else { return nil }
        return months.firstIndex(of: packed(name)).map { Int64($0 + 1) }
    }

    static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// Days from 1970-01-01 to the date; nil for a date that does not exist (31 April, 29 February of 2026) or a
    /// year outside 1970 … 9999 (what `UTCTime` writes).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64? {
        guard (1970...9999).contains(year), (1...12).contains(month), day >= 1 else { return nil }
        let lengths: [Int64] = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= lengths[Int(month - 1)] else { return nil }
        // Howard Hinnant's days_from_civil, for years from 1970 on (no negative division).
        let shifted = month <= 2 ? year - 1 : year
        let era = shifted / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
