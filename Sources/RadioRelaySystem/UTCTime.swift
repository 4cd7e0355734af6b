import Glibc

/// Wall-clock seconds (Unix) as a date and time in UTC, in the formats shown to peers: ISO 8601 with milliseconds
/// (HLS program dates), the HTTP date (`Date`, `Last-Modified`). Never traps: NaN is the epoch, and a time is clamped
/// to 1970-01-01 … 9999-12-31T23:59:59Z.
package struct UTCTime {
    private var parts = tm()
    private let millisecond: Int

    package init(_ seconds: Double) {
        let clamped = seconds.isNaN ? 0 : min(max(seconds, 0), 253_402_300_799)
        var whole = time_t(clamped.rounded(.down))
        millisecond = min(999, Int(((clamped - Double(whole)) * 1000).rounded(.down)))
        gmtime_r(&whole, &parts)
    }

    /// `2026-12-02T13:45:00.250Z`.
    package var iso8601: String {
        "\(parts.tm_year + 1900)-\(Self.two(parts.tm_mon + 1))-\(Self.two(parts.tm_mday))T\(Self.two(parts.tm_hour)):"
            + "\(Self.two(parts.tm_min)):\(Self.two(parts.tm_sec)).\(millisecond < 100 ? "0" : "")"
            + "\(millisecond < 10 ? "0" : "")\(millisecond)Z"
    }

    /// RFC 9110 §5.6.7: `Wed, 02 Dec 2026 13:45:00 GMT`.
    package var httpDate: String {
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(days[Int(parts.tm_wday) % 7]), \(Self.two(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) "
            + "\(parts.tm_year + 1900) \(Self.two(parts.tm_hour)):\(Self.two(parts.tm_min)):\(Self.two(parts.tm_sec)) GMT"
    }

    /// The common log format's time: `02/Dec/2026:13:45:00 +0000`.
    package var commonLogDate: String {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(Self.two(parts.tm_mday))/\(months[Int(parts.tm_mon) % 12])/\(parts.tm_year + 1900):"
            + "\(Self.two(parts.tm_hour)):\(Self.two(parts.tm_min)):\(Self.two(parts.tm_sec)) +0000"
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
