import RadioRelaySystem

/// A stream this server cannot decode, with what it is and what to send instead.
public struct UnsupportedFormat: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// What a live source sends, recognised from its first bytes (clients send `Content-Type: audio/mpeg` whatever
/// they encode): Ogg Opus or MP3, or a refusal that names what it is.
package enum SourceFormat {
    /// Bytes looked at before deciding: an Ogg page's first packet starts within them.
    static let sniffLength = 64
    static let advice = "send MP3 or Ogg Opus"

    /// The codec of a stream beginning with `bytes`; nil while too few bytes say nothing yet. Throws
    /// `UnsupportedFormat` for a recognisable other format (Ogg Vorbis, Ogg FLAC, FLAC, AAC in ADTS, WAV, WebM).
    package static func recognise(_ bytes: [UInt8]) throws(UnsupportedFormat) -> DataFormat.Codec? {
        guard bytes.count >= 4 else { return nil }
        if bytes.starts(with: Array("OggS".utf8)) {
            guard bytes.count >= sniffLength else { return nil }
            let window = bytes.prefix(sniffLength)
            if contains(window, "OpusHead") { return .opus }
            if contains(window, "vorbis") { throw UnsupportedFormat("Ogg Vorbis is not decoded here: \(advice)") }
            if contains(window, "FLAC") { throw UnsupportedFormat("Ogg FLAC is not decoded here: \(advice)") }
            if contains(window, "Speex") { throw UnsupportedFormat("Ogg Speex is not decoded here: \(advice)") }
            throw UnsupportedFormat("an Ogg stream whose first stream is not Opus: \(advice)")
        }
        if bytes.starts(with: Array("fLaC".utf8)) { throw UnsupportedFormat("FLAC is not decoded here: \(advice)") }
        if bytes.starts(with: Array("RIFF".utf8)) { throw UnsupportedFormat("WAV is not decoded here: \(advice)") }
        if bytes.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) {
            throw UnsupportedFormat("WebM/Matroska is not decoded here: \(advice)")
        }
        // ADTS: a 12-bit sync and layer 00, which MPEG audio never has.
        if bytes[0] == 0xFF && bytes[1] & 0xF6 == 0xF0 {
            throw UnsupportedFormat("AAC (ADTS) is not decoded here: \(advice)")
        }
        return .mpeg
    }

    private static func contains(_ window: ArraySlice<UInt8>, _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard window.count >= needle.count else { return false }
        var index = window.startIndex
        while index + needle.count <= window.endIndex {
            if window[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
