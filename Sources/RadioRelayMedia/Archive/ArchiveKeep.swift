import RadioRelaySystem

/// What an archive keeps (`archive_keep`): files younger than an age, and at most a total size — either, both, or
/// neither (everything is kept). Written `7d`, `12h`, `90m`, `3600s`, `20G`, `512M`, or one of each, `7d 50G`
/// (sizes in powers of 1024: K, M, G, T).
///
/// The rule (`removals`): a finished file goes when all of it is older than the age (its end is more than `age`
/// before now), and, oldest first, while the files together are larger than the size. The file being written is
/// never removed, whatever its size. A pure value on given times (tests: `ArchiveRulesTests`).
public struct ArchiveKeep: Sendable, Equatable {
    /// Seconds of audio kept (nil: no limit by age).
    public var seconds: Int64?
    /// Bytes kept (nil: no limit by size).
    public var bytes: Int64?

    public init(seconds: Int64? = nil, bytes: Int64? = nil) {
        self.seconds = seconds
        self.bytes = bytes
    }

    /// What `archive_keep` accepts, for its error message.
    public static let accepts =
        "a duration (e.g. 7d, 12h, 90m, 600s), a size (e.g. 20G, 512M), or both (7d 50G); none keeps everything"

    /// The longest age: 10 years.
    static let maxSeconds: Int64 = 3_650 * 86_400
    /// The largest size: 1 PiB.
    static let maxBytes: Int64 = 1 << 50

    /// The value of `text` (`none` is no limit at all), or nil when it is not one.
    public init?(parsing text: String) {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard !words.isEmpty, words.count <= 2 else { return nil }
        if words.count == 1, words[0] == "none" {
            self.init()
            return
        }
        var keep = ArchiveKeep()
        for word in words {
            let scalars = Array(word.unicodeScalars)
            guard let unit = scalars.last, scalars.count >= 2, scalars.count <= 20 else { return nil }
            guard let number = Int64(String(String.UnicodeScalarView(scalars.dropLast()))), number > 0 else {
                return nil
            }
            let durations: [Unicode.Scalar: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
            let sizes: [Unicode.Scalar: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
            if let factor = durations[unit] {
                let (value, overflow) = number.multipliedReportingOverflow(by: factor)
                guard keep.seconds == nil, !overflow, value <= Self.maxSeconds else { return nil }
                keep.seconds = value
            } else if let factor = sizes[unit] {
                let (value, overflow) = number.multipliedReportingOverflow(by: factor)
                guard keep.bytes == nil, !overflow, value <= Self.maxBytes else { return nil }
                keep.bytes = value
            } else {
                return nil
            }
        }
        self = keep
    }

    /// The files to remove from `files` (oldest first, as the index holds them) at `now` (ms): by age, then by size.
    /// - Parameter current: the file being written, which stays.
    package func removals(_ files: [ArchiveIndex.File], current: String?, now: Int64) -> [String] {
        var removed: [String] = []
        var total = files.reduce(Int64(0)) { $0 &+ Int64($1.size) }
        for file in files where file.name != current {
            var goes = false
            if let seconds {
                let (cutoff, overflow) = now.subtractingReportingOverflow(seconds * 1000)
                goes = !overflow && file.end <= cutoff
            }
            if let bytes, total > bytes { goes = true }
            guard goes else { continue }
            removed.append(file.name)
            total -= Int64(file.size)
        }
        return removed
    }
}
