import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Readers of flag and config-file values: text to a value, or nil when the text is not one the flag accepts.
enum Values {
    static func integer(_ range: ClosedRange<Int>) -> @Sendable (String) -> Int? {
        { Units.integer($0, in: range) }
    }

    static func seconds(_ range: ClosedRange<Double>) -> @Sendable (String) -> Double? {
        { Units.seconds($0, in: range) }
    }

    /// 6k to 510k, the range libopus accepts.
    static func bitrate(_ text: String) -> Int? {
        guard let bitrate = Units.bitrate(text), (6_000...510_000).contains(bitrate) else { return nil }
        return bitrate
    }

    /// A multiple of 20 ms (one Opus frame) from 20 to 1000.
    static func pageDuration(_ text: String) -> Int? {
        guard let ms = Units.integer(text, in: 20...1000), ms % 20 == 0 else { return nil }
        return ms
    }

    /// `auto` (nil inside) or a fixed interval, 0 to 2000 ms, in seconds.
    static func flush(_ text: String) -> Double?? {
        if text == "auto" { return .some(nil) }
        guard let ms = Units.integer(text, in: 0...2000) else { return nil }  // not .some(nil): not a value
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
    static func yesNo(_ text: String) -> Bool? {
        switch text {
        case "yes": true
        case "no": false
        default: nil
        }
    }

    /// One line of printable text, 1 to 256 characters (a station's name for people, its genre, its web site).
    static func line(_ text: String) -> String? {
        guard (1...256).contains(text.count), Sanitized.text(text, limit: 256) == text else { return nil }
        return text
    }

    /// A mount path, with or without its leading `/` (kept without).
    static func mount(_ text: String) -> String? {
        let path = text.hasPrefix("/") ? String(text.dropFirst()) : text
        return StationNames.isValidMount(path) ? path : nil
    }

    /// `NAME:PORT:BITRATE[:mono]` (`--rendition`): a rendition with the name, port, bitrate and channels given and
    /// everything else from `station`.
    static func rendition(_ text: String, of station: StationConfiguration) -> RenditionConfiguration? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 || (parts.count == 4 && parts[3] == "mono"), StationNames.isValid(parts[0]),
            let port = Units.integer(parts[1], in: 1...65535), let bitrate = bitrate(parts[2])
        else { return nil }
        var rendition = RenditionConfiguration(name: parts[0])
        rendition.encoder = station.encoder
        rendition.encoder.serial = EncoderConfiguration().serial
        rendition.encoder.bitrate = bitrate
        rendition.encoder.channels = parts.count == 4 ? 1 : 2
        rendition.broadcaster = station.broadcaster
        rendition.broadcaster.port = port
        return rendition
    }

    /// An IPv4 or IPv6 literal the listening socket can bind.
    static func address(_ text: String) -> String? {
        SocketAddress(host: text, port: 0) == nil ? nil : text
    }
}

extension Log.Priority {
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
