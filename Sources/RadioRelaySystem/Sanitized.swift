/// Upstream text made safe to show: stream titles, `icy-name`, `icy-genre` and other strings a server chooses.
///
/// Control characters are removed — C0 (NUL, CR, LF, ESC…), DEL and C1 — so a title cannot end a log line, forge a
/// journal priority (`\n<0>`) or drive a terminal; so are the bidirectional overrides and isolates, which can make a
/// line read differently from what it holds. Length is capped in UTF-8 bytes (one "character" can be a letter and
/// 31 000 combining marks, 62 KB): cut at a character boundary unless one character alone is over the cap, then at a
/// scalar boundary. Escaping for a particular output (JSON, HTML) is that output's job, on top of this.
package enum Sanitized {
    /// The longest title kept, in UTF-8 bytes: ICY metadata blocks hold at most 4 080 bytes.
    package static let titleLimit = 1024
    /// The longest station name, genre or similar header kept, in UTF-8 bytes.
    package static let headerLimit = 256
    /// What marks a cut: "…", 3 bytes.
    static let ellipsis: Unicode.Scalar = "\u{2026}"

    /// `raw` without control and bidi-override characters, at most `limit` UTF-8 bytes (ending in "…" when cut; a
    /// limit of 0 or less is none). Work stops at the limit, however long `raw` is.
    package static func text(_ raw: some StringProtocol, limit: Int = headerLimit) -> String {
        var scalars = String.UnicodeScalarView()
        var bytes = 0
        var beyond: Unicode.Scalar?  // the first scalar that did not fit
        for scalar in raw.unicodeScalars where !isUnsafe(scalar) {
            let size = UTF8.width(scalar)
            if limit > 0 && bytes > limit - size {
                beyond = scalar
                break
            }
            scalars.append(scalar)
            bytes += size
        }
        guard var next = beyond else { return String(scalars) }
        let room = max(0, limit - UTF8.width(ellipsis))
        while bytes > room, let last = scalars.popLast() {
            bytes -= UTF8.width(last)
            next = last
        }
        var kept = String(scalars)
        // A character the cut split (its combining marks beyond the cut) goes whole, unless it is the only one.
        var joined = scalars
        joined.append(next)
        if kept.count > 1 && String(joined).count == kept.count { kept.removeLast() }
        if limit >= UTF8.width(ellipsis) { kept.unicodeScalars.append(ellipsis) }
        return kept
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
