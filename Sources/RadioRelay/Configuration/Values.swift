import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Readers of flag and config-file values: text to a value, or nil when the text is not one the flag accepts.
enum Values {
    /// "LOW to HIGH", as an option's `accepts` says a range (whole numbers without a fraction).
    static func text(_ range: ClosedRange<Int>, joiner: String = " to ") -> String {
        "\(range.lowerBound)\(joiner)\(range.upperBound)"
    }

    static func text(_ range: ClosedRange<Double>) -> String {
        func number(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        }
        return "\(number(range.lowerBound)) to \(number(range.upperBound))"
    }

    /// "6k to 510k": a bitrate range in thousands.
    static func kilo(_ range: ClosedRange<Int>) -> String {
        "\(range.lowerBound / 1000)k to \(range.upperBound / 1000)k"
    }

    /// A station's `port`: 1 to 65535, or `none` (nil inside: no raw TCP port).
    static func portOrNone(_ text: String) -> Int?? {
        text.trimmingBlanks() == "none" ? .some(nil) : Units.integer(text, in: Port.range).map { .some($0) }
    }

    static func integer(_ range: ClosedRange<Int>) -> @Sendable (String) -> Int? {
        { Units.integer($0, in: range) }
    }

    static func seconds(_ range: ClosedRange<Double>) -> @Sendable (String) -> Double? {
        { Units.seconds($0, in: range) }
    }

    /// 6k to 510k, the range libopus accepts.
    static func bitrate(_ text: String) -> Int? {
        guard let bitrate = Units.bitrate(text), EncoderConfiguration.bitrateRange.contains(bitrate) else { return nil }
        return bitrate
    }

    /// A multiple of 20 ms (one Opus frame) from 20 to 1000.
    static func pageDuration(_ text: String) -> Int? {
        if Units.integer(text, in: 10...10) != nil { return EncoderConfiguration.shortPage }
        guard let ms = Units.integer(text, in: EncoderConfiguration.pageDurationRange), ms % 20 == 0 else { return nil }
        return ms
    }

    /// `auto` (nil inside) or a fixed interval, 0 to 2000 ms, in seconds.
    static func flush(_ text: String) -> Double?? {
        if text == "auto" { return .some(nil) }
        // not .some(nil): not a value
        guard let ms = Units.integer(text, in: BroadcasterConfiguration.flushMillisecondsRange) else { return nil }
        return .some(Double(ms) / 1000)
    }

    /// An absolute path of printable characters (a file the service writes).
    static func absolutePath(_ text: String) -> String? {
        guard text.hasPrefix("/"), text.utf8.count <= 4096, !text.unicodeScalars.contains(where: Sanitized.isUnsafe)
        else { return nil }
        return text
    }

    /// `auto` (nil inside) or a number of network loops.

    static func networkThreads(_ text: String) -> Int?? {
        if text == "auto" { return .some(nil) }
        guard let count = Units.integer(text, in: 1...NetworkPool.maxThreads) else { return nil }
        return .some(count)
    }

    static func commonRate(_ text: String) -> Int? {
        guard let rate = Units.integer(text, in: 1...1_000_000), Reader.supportedCommonRates.contains(rate) else {
            return nil
        }
        return rate
    }

    /// nil inside: auto (pace files only).
    static func pace(_ text: String) -> Bool?? {
        switch text {
        case "auto": return .some(nil)
        case "yes": return true
        case "no": return false
        default: return nil
        }
    }

    /// `yes` or `no`.
    /// `hot` (true) or `cold`.
    static func standby(_ text: String) -> Bool? {
        switch text {
        case "hot": true
        case "cold": false
        default: nil
        }
    }

    /// A level in dBFS, with or without its unit: `-50`, `-50dB`, `-50 dBFS`.
    static func decibels(_ range: ClosedRange<Double>) -> @Sendable (String) -> Double? {
        { text in
            var number = Substring(text.trimmingWhitespace())
            for unit in ["dBFS", "dbfs", "dB", "db"] where number.hasSuffix(unit) {
                number = number.dropLast(unit.count)
                break
            }
            return Units.seconds(String(number), in: range)
        }
    }

    /// `off` (nil), or a loudness target in LUFS within `range` (`-16`, `-16 LUFS`); nil when it is neither.
    static func loudness(_ range: ClosedRange<Double>) -> @Sendable (String) -> Double?? {
        offOrLevel(range, unit: "LUFS")
    }

    /// `off` (nil), or a true-peak ceiling in dBTP within `range` (`-1`, `-1.0 dBTP`); nil when it is neither.
    static func truePeak(_ range: ClosedRange<Double>) -> @Sendable (String) -> Double?? {
        offOrLevel(range, unit: "dBTP")
    }

    /// `off` (nil), or a number within `range` with `unit` after it or not (in either case, a space before it or
    /// not); nil when it is neither.
    private static func offOrLevel(_ range: ClosedRange<Double>, unit: String) -> @Sendable (String) -> Double?? {
        { text in
            let trimmed = text.trimmingWhitespace()
            if trimmed == "off" { return .some(nil) }
            var number = Substring(trimmed)
            for suffix in [" " + unit, unit, " " + unit.lowercased(), unit.lowercased()] where number.hasSuffix(suffix)
            {
                number = number.dropLast(suffix.count)
                break
            }
            guard let value = Units.seconds(String(number), in: range) else { return nil }
            return .some(value)
        }
    }

    /// `low` (true: Opus's restricted low-delay application) or `normal` (false).
    static func latency(_ text: String) -> Bool? {
        switch text {
        case "low": true
        case "normal": false
        default: nil
        }
    }

    static func yesNo(_ text: String) -> Bool? {
        switch text {
        case "yes": true
        case "no": false
        default: nil
        }
    }

    /// One line of printable text, 1 to 256 bytes of UTF-8 (a station's name for people, its genre, its web site).
    static func line(_ text: String) -> String? {
        guard (1...256).contains(text.utf8.count), Sanitized.text(text, limit: 256) == text else { return nil }
        return text
    }

    /// A mount path, with or without its leading `/` (kept without).
    static func mount(_ text: String) -> String? {
        let path = text.hasPrefix("/") ? String(text.dropFirst()) : text
        return StationNames.isValidMount(path) ? path : nil
    }

    /// `NAME:PORT:BITRATE[:mono]` (`--rendition`): a rendition with the name, port (`none`: no raw port, HTTP
    /// listeners only), bitrate and channels given and everything else from `station`.
    static func rendition(_ text: String, of station: StationConfiguration) -> RenditionConfiguration? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 || (parts.count == 4 && parts[3] == "mono"), StationNames.isValid(parts[0]),
            let port = parts[1] == "none" ? 0 : Port.parse(parts[1]), let bitrate = bitrate(parts[2])
        else { return nil }
        var rendition = RenditionConfiguration(name: parts[0])
        rendition.encoder = station.encoder
        rendition.encoder.serial = EncoderConfiguration().serial
        rendition.encoder.bitrate = bitrate
        rendition.encoder.channels = parts.count == 4 ? 1 : 2
        rendition.broadcaster = station.broadcaster
        rendition.broadcaster.rawPort = parts[1] == "none" ? nil : port
        return rendition
    }

    /// `off` (nil inside) or an address `parse` reads.
    static func listenAddressOrOff(_ parse: @escaping @Sendable (String) -> ListenAddress?)
        -> @Sendable (String) -> ListenAddress??
    {
        { text in text == "off" ? .some(nil) : parse(text).map { .some($0) } }
    }

    /// Host names, comma-separated (blanks around each ignored): each 1 to 253 characters of letters, digits, `-`
    /// and `.`, labels of 1 to 63.
    static func hostNames(_ text: String) -> [String]? {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingBlanks() }
        return names.allSatisfy(isHostName) ? names : nil
    }

    /// A DNS name: 1 to 253 characters of letters, digits, `-` and `.`, labels of 1 to 63.
    static func isHostName(_ name: some StringProtocol) -> Bool {
        guard (1...253).contains(name.count) else { return false }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.count)
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    /// An IPv4 or IPv6 literal the listening socket can bind.
    static func address(_ text: String) -> String? {
        SocketAddress(host: text, port: 0) == nil ? nil : text
    }
}

extension Log.Priority {
    /// "error", "warning", "notice", "info" or "debug".
    var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// "error", "warning", "notice", "info" or "debug".
    init?(name: String) {
        switch name {
        case "error": self = .error
        case "warning": self = .warning
        case "notice": self = .notice
        case "info": self = .info
        case "debug": self = .debug
        default: return nil
        }
    }
}
