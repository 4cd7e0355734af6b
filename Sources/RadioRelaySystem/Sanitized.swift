/// Upstream text made safe to show: stream titles, `icy-name`, `icy-genre` and other strings a server chooses.
///
/// Control characters are removed — C0 (NUL, CR, LF, ESC…), DEL and C1 — so a title cannot end a log line, forge a
/// journal priority (`\n<0>`) or drive a terminal; so are the bidirectional overrides and isolates, which can make a
/// line read differently from what it holds. Length is capped (in characters, never splitting one). Escaping for a
/// particular output (JSON, HTML) is that output's job, on top of this.
package enum Sanitized {
    /// The longest title kept, in characters: ICY metadata blocks hold at most 4 080 bytes.
    package static let titleLimit = 1024
    /// The longest station name, genre or similar header kept.
    package static let headerLimit = 256

    /// `raw` without control and bidi-override characters, cut to `limit` characters (with "…" when cut).
    package static func text(_ raw: some StringProtocol, limit: Int = headerLimit) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars where !isUnsafe(scalar) { scalars.append(scalar) }
        let clean = String(scalars)
        guard limit > 0, clean.count > limit else { return clean }
        return String(clean.prefix(limit - 1)) + "…"
    }

    /// The `StreamTitle` of an ICY metadata block, made safe; nil when the block has none.
    package static func title(in fields: [String: String]) -> String? {
        fields["StreamTitle"].map { text($0, limit: titleLimit) }
    }

    /// C0, DEL, C1, and the bidi embeddings, overrides, isolates and marks.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x200E, 0x200F, 0x061C: return true  // LRM, RLM, ALM
        case 0x202A...0x202E: return true  // LRE, RLE, PDF, LRO, RLO
        case 0x2066...0x2069: return true  // LRI, RLI, FSI, PDI
        default: return false
        }
    }
}
