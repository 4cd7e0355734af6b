import Glibc
import RadioRelaySystem
import Synchronization

/// Where a time-shifted listener starts in its mount's archive: at a moment (`?start=2026-12-05T08:00:00Z`) or a
/// number of seconds behind live (`?offset=2400`), which it then stays behind for as long as it listens. A pure
/// value (tests: `TimeShiftStartTests`); times are milliseconds since the Unix epoch, UTC.
package enum TimeShiftStart: Sendable, Equatable {
    case at(Int64)
    case behind(seconds: Int64)

    /// The longest offset taken: ten years, beyond any archive.
    package static let maxOffset: Int64 = 315_576_000

    /// What a request's query asks for, given its parameters (percent-decoded): nil when it names neither `start`
    /// nor `offset`; a reason (for a 400) when what it names cannot be read, or it names both.
    package static func parse(_ parameters: [String: [UInt8]]) -> Result<TimeShiftStart, TimeShiftStartError>? {
        let start = parameters["start"]
        let offset = parameters["offset"]
        switch (start, offset) {
        case (nil, nil): return nil
        case (.some, .some): return .failure(TimeShiftStartError("give start or offset, not both"))
        case (let text?, nil):
            guard let millis = moment(text) else {
                return .failure(TimeShiftStartError("start is a UTC time like 2026-12-05T08:00:00Z"))
            }
            return .success(.at(millis))
        case (nil, let text?):
            guard !text.isEmpty, text.count <= 10, text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let seconds = Int64(String(decoding: text, as: UTF8.self)), seconds <= maxOffset
            else {
                return .failure(TimeShiftStartError("offset is whole seconds behind live, 0 to \(maxOffset)"))
            }
            return .success(.behind(seconds: seconds))
        }
    }

    /// The moment asked for, when the wall clock reads `now` (Unix seconds).
    package func target(now: Double) -> Int64 {
        switch self {
        case .at(let millis): return millis
        case .behind(let seconds):
            let nowMillis = Int64((min(max(now, 0), 253_402_300_799) * 1000).rounded(.down))
            return nowMillis - seconds * 1000
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff]Z` (UTC, `Z` or `+00:00`), as ms since the epoch; nil for anything else.
    package static func moment(_ bytes: [UInt8]) -> Int64? {
        var text = bytes
        if text.count > 6, Array(text.suffix(6)) == Array("+00:00".utf8) { text = text.dropLast(6) + [0x5A] }
        guard text.count >= 20, text.count <= 24, text.last == UInt8(ascii: "Z") else { return nil }
        var millis: Int64 = 0
        if text.count > 20 {
            // A fraction: `.f` to `.fff`.
            let fraction = text[19..<text.count - 1]
            guard fraction.first == UInt8(ascii: "."), fraction.count >= 2,
                fraction.dropFirst().allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
            else { return nil }
            var scale: Int64 = 100
            for digit in fraction.dropFirst() {
                millis += Int64(digit - 0x30) * scale
                scale /= 10
            }
        }
        // The seconds as an archive file name has them (dashes for the colons), read by `ArchiveName.parse`.
        var stamp = Array(text[0..<19])
        guard stamp[13] == UInt8(ascii: ":"), stamp[16] == UInt8(ascii: ":") else { return nil }
        stamp[13] = UInt8(ascii: "-")
        stamp[16] = UInt8(ascii: "-")
        guard let parsed = ArchiveName.parse(String(decoding: stamp, as: UTF8.self) + "Z.opus") else { return nil }
        return parsed.start + millis
    }
}

/// Why a time-shift request cannot be read (its 400's text).
package struct TimeShiftStartError: Error, Equatable, Sendable {
    package let reason: String
    package init(_ reason: String) { self.reason = reason }
}
