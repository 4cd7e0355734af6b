import RadioRelaySystem

/// The one escaper for HTML and XML that the server writes (the station page, the XSPF playlists, Icecast's admin
/// answers): element content and double- or single-quoted attribute values. It walks Unicode scalars, never
/// `Character`s: a quote followed by a combining mark is one grapheme that no `case "\""` matches, and it once
/// broke out of an attribute on the station page. What XML forbids even as a reference (C0 controls other than tab,
/// line feed and carriage return; U+FFFE, U+FFFF) and the controls `Sanitized` removes (C1, bidi overrides and
/// isolates, which make text read differently from what it holds) are left out.
package enum Markup {
    package static func escape(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            case "\t", "\n", "\r": out.append(scalar)
            default:
                guard !Sanitized.isUnsafe(scalar), scalar.value != 0xFFFE, scalar.value != 0xFFFF else { continue }
                out.append(scalar)
            }
        }
        return String(out)
    }
}
