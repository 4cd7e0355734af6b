import RadioRelaySystem

/// A station's archive (`archive`, `archive_span`, `archive_keep`): where its files go, how long one file runs, and
/// what is kept. A pure value: the rules that follow from it (where a file ends, which files go) are its own
/// functions and `ArchiveKeep`'s, on times given to them (milliseconds since the Unix epoch, UTC).
public struct ArchiveSettings: Sendable, Equatable {
    /// The archive's root; the station's files go in `DIRECTORY/<station>/` (nil: no archive).
    public var directory: String?
    /// Seconds of one file: files start on multiples of it on the UTC clock (a span that divides a day, so that
    /// every day's files start at midnight).
    public var span = 600
    public var keep = ArchiveKeep()

    /// 10 s to a day.
    public static let spanRange = 10...86_400

    public init() {}

    /// Whether `seconds` may be a span: within `spanRange`, and a divisor of a day.
    public static func isSpan(_ seconds: Int) -> Bool { spanRange.contains(seconds) && 86_400 % seconds == 0 }

    /// The first boundary of the UTC clock after `millis`: where the file that holds `millis` ends.
    package func boundary(after millis: Int64) -> Int64 {
        let spanMillis = Int64(max(1, span)) * 1000
        let index = millis >= 0 ? millis / spanMillis : (millis - spanMillis + 1) / spanMillis
        let (next, overflow) = (index + 1).multipliedReportingOverflow(by: spanMillis)
        return overflow ? .max : next
    }

    /// The start of the span that holds `millis` (a multiple of the span on the UTC clock).
    package func spanStart(of millis: Int64) -> Int64 {
        let spanMillis = Int64(max(1, span)) * 1000
        let next = boundary(after: millis)
        return next == .max ? millis : next - spanMillis
    }
}

extension ArchiveSettings {
    /// Whether a volume with `available` of its `total` bytes free is too full for the archive to go on: less than
    /// 1 % of it free, at most 1 GiB and at least 1 MiB, is kept back for the rest of the system (a log, a database).
    package static func isNearlyFull(available: Int64, total: Int64) -> Bool {
        available < reserve(total: total)
    }

    package static func reserve(total: Int64) -> Int64 {
        max(1 << 20, min(max(0, total) / 100, 1 << 30))
    }

    /// Seconds between two attempts to write again after a failure (the disk full, read-only, failing).
    package static let retryInterval = 5.0
}
