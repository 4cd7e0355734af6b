import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Parsing of the values people type in flags and config files.
package enum Units {
    /// "96k", "96K", "96000" → 96 000 b/s; "1.5M" → 1 500 000. Nil for anything else.
    package static func bitrate(_ text: String) -> Int? {
        let trimmed = text.trimmingWhitespace()
        guard let last = trimmed.last else { return nil }
        var multiplier = 1.0
        var number = Substring(trimmed)
        switch last {
        case "k", "K":
            multiplier = 1_000
            number = number.dropLast()
        case "m", "M":
            multiplier = 1_000_000
            number = number.dropLast()
        default: break
        }
        guard let value = Double(number), value.isFinite, value > 0 else { return nil }
        let bits = value * multiplier
        guard bits < 1e9, bits == bits.rounded() else { return nil }
        return Int(bits)
    }

    /// A non-negative whole number within `range`.
    package static func integer(_ text: String, in range: ClosedRange<Int>) -> Int? {
        guard let value = Int(text.trimmingWhitespace()), range.contains(value) else { return nil }
        return value
    }

    /// Seconds as a decimal ("2", "0.5").
    package static func seconds(_ text: String, in range: ClosedRange<Double>) -> Double? {
        guard let value = Double(text.trimmingWhitespace()), value.isFinite, range.contains(value) else { return nil }
        return value
    }
}
