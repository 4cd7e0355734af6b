import RadioRelaySystem

/// The metadata block an Icecast or SHOUTcast server puts after every `icy-metaint` bytes of audio for a listener
/// that asked with `Icy-MetaData: 1`: one length byte (the text's length in 16-byte units), then the text,
/// `StreamTitle='…';`, padded with zeros. The `ICYDemuxer` reads what this writes.
public enum ICYMetadataBlock {
    /// The block a listener gets when nothing changed since its last one (Icecast's rule: a title is sent once).
    public static let empty: [UInt8] = [0]
    /// The longest text a block can carry: 255 × 16 bytes.
    public static let maxText = 255 * 16
    /// The interval radio-relay announces (`icy-metaint`): Icecast's default.
    public static let interval = 16_000

    /// The block for `title`, cut at a character boundary so that the text fits. The title is shown as it is (an
    /// apostrophe stays one, as Icecast sends it; it is already one printable line, `Sanitized.title`) but for an
    /// apostrophe followed by `;`, which players read as the field's end: an upstream could end the title there and
    /// add fields of its own (`x';StreamUrl='http://…`). That apostrophe becomes `’`.
    public static func block(title: String) -> [UInt8] {
        let prefix = Array("StreamTitle='".utf8)
        let suffix = Array("';".utf8)
        var titleBytes: [UInt8] = []
        let room = maxText - prefix.count - suffix.count
        let scalars = Array(title.unicodeScalars)
        for (index, original) in scalars.enumerated() {
            let endsField = original == "'" && index + 1 < scalars.count && scalars[index + 1] == ";"
            let scalar: Unicode.Scalar = endsField ? "\u{2019}" : original
            let encoded = Array(String(scalar).utf8)
            guard titleBytes.count + encoded.count <= room else { break }
            titleBytes += encoded
        }
        let text = prefix + titleBytes + suffix
        let units = (text.count + 15) / 16
        return [UInt8(units)] + text + [UInt8](repeating: 0, count: units * 16 - text.count)
    }
}
