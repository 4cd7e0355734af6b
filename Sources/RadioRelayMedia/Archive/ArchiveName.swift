import Glibc
import RadioRelaySystem

/// An archive file's name: its UTC start to the second, `2026-12-05T08-00-00Z.opus` (dashes for the colons, so that
/// every file system and shell takes it), and back. Names sort as their times do.
package enum ArchiveName {
    /// The file's format, and the extension that says it.
    package enum Format: String, Sendable, Equatable {
        case opus
        case mp3
    }

    /// The name of a file that starts at `millis` (ms since the epoch; the milliseconds are left out).
    package static func name(start millis: Int64, format: Format) -> String {
        stamp(start: millis) + "." + format.rawValue
    }

    /// The UTC second of `millis` as names write it: `2026-12-05T08-00-00Z`.
    package static func stamp(start millis: Int64) -> String {
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let iso = UTCTime(Double(seconds)).iso8601  // 2026-12-05T08:00:00.000Z
        let bytes = Array(iso.utf8)
        guard bytes.count == 24 else { return "\(seconds)" }
        let stamp = bytes[0..<19].map { $0 == UInt8(ascii: ":") ? UInt8(ascii: "-") : $0 }
        return String(decoding: stamp, as: UTF8.self) + "Z"
    }

    /// The start (ms since the epoch) and format of a file named `name`; nil for any other name.
    package static func parse(_ name: String) -> (start: Int64, format: Format)? {
        let bytes = Array(name.utf8)
        guard bytes.count > 21, bytes[19] == UInt8(ascii: "Z"), bytes[20] == UInt8(ascii: "."),
            let format = Format(rawValue: String(decoding: bytes[21...], as: UTF8.self))
        else { return nil }
        let dashes = [4, 7, 13, 16]
        guard dashes.allSatisfy({ bytes[$0] == UInt8(ascii: "-") }), bytes[10] == UInt8(ascii: "T") else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in bytes[range] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int32(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            year >= 1970, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        let seconds = Int64(timegm(&parts))
        // A date that does not exist (31 April) comes back normalized: not a name we write.
        guard seconds >= 0, Self.name(start: seconds * 1000, format: format) == name else { return nil }
        return (seconds * 1000, format)
    }
}
