import RadioRelaySystem

/// The HLS playlists (RFC 8216) as text, from plain values: an output's live media playlist and a station's
/// multivariant playlist. Names are relative: a segment `TOKEN-SEQ.m4s` and an init segment `TOKEN-init-ID.mp4`
/// beside the playlist, where the token is the stream's (its start time), so no two runs of a station ever give two
/// different segments one name and a cache can keep a segment as long as it likes.
package enum HLSPlaylist {
    package static func segmentName(token: String, sequence: Int) -> String { "\(token)-\(sequence).m4s" }
    package static func initName(token: String, id: Int) -> String { "\(token)-init-\(id).mp4" }

    /// What a name beside the playlist asks for.
    package enum Resource: Equatable, Sendable {
        case media
        case multivariant
        case segment(Int)
        case initSegment(Int)
    }

    /// `live.m3u8`, `master.m3u8`, `TOKEN-SEQ.m4s` or `TOKEN-init-ID.mp4` of this stream's token; nil for another
    /// name (an old token's segment too: it is gone).
    package static func resource(_ name: Substring, token: String) -> Resource? {
        if name == "live.m3u8" { return .media }
        if name == "master.m3u8" { return .multivariant }
        guard name.hasPrefix(token + "-") else { return nil }
        let rest = name.dropFirst(token.utf8.count + 1)
        if rest.hasSuffix(".m4s"), let sequence = number(rest.dropLast(4)) { return .segment(sequence) }
        if rest.hasPrefix("init-"), rest.hasSuffix(".mp4"), let id = number(rest.dropFirst(5).dropLast(4)) {
            return .initSegment(id)
        }
        return nil
    }

    /// A decimal number of at most 18 digits, nothing else.
    private static func number(_ text: Substring) -> Int? {
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    /// The live media playlist of `segmenter`'s window.
    package static func media(_ segmenter: HLSSegmenter, token: String) -> String {
        let listed = segmenter.playlistSegments
        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(segmenter.settings.targetDuration)",
            "#EXT-X-MEDIA-SEQUENCE:\(listed.first?.sequence ?? 0)",
        ]
        if let first = listed.first {
            let sequence = first.discontinuitySequence - (first.discontinuity ? 1 : 0)
            if sequence > 0 { lines.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(sequence)") }
        }
        lines.append("#EXT-X-INDEPENDENT-SEGMENTS")
        var map: Int?
        var titles = segmenter.titles[...]
        for segment in listed {
            if segment.discontinuity { lines.append("#EXT-X-DISCONTINUITY") }
            if segment.map != map {
                map = segment.map
                lines.append("#EXT-X-MAP:URI=\"\(initName(token: token, id: segment.map))\"")
            }
            lines.append("#EXT-X-PROGRAM-DATE-TIME:\(iso8601(segment.programDate))")
            // Titles that started before this segment ends.
            while let title = titles.first, title.start < segment.programDate + segment.seconds {
                lines.append(dateRange(title))
                titles = titles.dropFirst()
            }
            lines.append("#EXTINF:\(decimal(segment.seconds)),")
            lines.append(segmentName(token: token, sequence: segment.sequence))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One output of a station, as the multivariant playlist lists it.
    package struct Variant: Equatable, Sendable {
        /// Where its media playlist is, relative to the multivariant playlist (`../NAME/live.m3u8`).
        package var uri: String
        /// Peak and average bits per second of its segments.
        package var bandwidth: Int
        package var averageBandwidth: Int
        package var channels: Int
        package var name: String

        package init(uri: String, bandwidth: Int, averageBandwidth: Int, channels: Int, name: String) {
            self.uri = uri
            self.bandwidth = bandwidth
            self.averageBandwidth = averageBandwidth
            self.channels = channels
            self.name = name
        }
    }

    /// A station's outputs as one multivariant playlist, the highest bandwidth first.
    package static func multivariant(_ variants: [Variant]) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        for variant in variants.sorted(by: { $0.bandwidth > $1.bandwidth }) {
            lines.append(
                "#EXT-X-STREAM-INF:BANDWIDTH=\(max(1, variant.bandwidth)),"
                    + "AVERAGE-BANDWIDTH=\(max(1, variant.averageBandwidth)),CODECS=\"opus\","
                    + "CHANNELS=\"\(variant.channels)\",NAME=\"\(quoted(variant.name))\"")
            lines.append(variant.uri)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A title as an `EXT-X-DATERANGE` of its own class, the text in `X-TITLE`.
    static func dateRange(_ title: HLSSegmenter.TitleMark) -> String {
        "#EXT-X-DATERANGE:ID=\"title-\(title.id)\",CLASS=\"net.radio-relay.title\","
            + "START-DATE=\"\(iso8601(title.start))\",X-TITLE=\"\(quoted(title.title))\""
    }

    /// Text for a quoted-string attribute: no double quote, CR or LF (RFC 8216 §4.2), at most 1024 characters.
    package static func quoted(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.prefix(1024).map {
                    $0 == "\"" ? "'" : ($0.value < 0x20 || $0.value == 0x7F ? " " : $0)
                }
            ))
    }

    /// `EXTINF` durations: seconds with five decimals.
    package static func decimal(_ seconds: Double) -> String {
        let micro = seconds.isFinite ? Int((min(max(0, seconds), 1e9) * 100_000).rounded()) : 0
        let fraction = String(micro % 100_000)
        return "\(micro / 100_000)." + String(repeating: "0", count: 5 - fraction.count) + fraction
    }

    /// Unix seconds as an ISO 8601 date in UTC with milliseconds: `2026-12-02T13:45:00.250Z`.
    package static func iso8601(_ seconds: Double) -> String { UTCTime(seconds).iso8601 }

    /// `playlist` with `query` (`pass=…`, URL-safe) on every URI it names — each URI line and each `EXT-X-MAP`'s
    /// `URI` — so that a player fetches them with it: a protected station's playlists carry the session's pass
    /// (`HTTPFrontLoop+HLS`). A URI with a query already gets `&query`. Nothing else changes (a title's text in a
    /// `DATERANGE` is left alone whatever it holds).
    package static func stamped(_ playlist: [UInt8], query: String) -> [UInt8] {
        let mapPrefix = Array("#EXT-X-MAP:URI=\"".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(playlist.count + 64 * query.utf8.count)
        let lines = playlist.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            if index > 0 { out.append(UInt8(ascii: "\n")) }
            if line.starts(with: mapPrefix),
                let close = line.dropFirst(mapPrefix.count).firstIndex(of: UInt8(ascii: "\""))
            {
                let uri = line[line.startIndex..<close]
                out += uri + Array(((uri.contains(UInt8(ascii: "?")) ? "&" : "?") + query).utf8) + line[close...]
            } else if let first = line.first, first != UInt8(ascii: "#"), !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D })
            {
                out += line + Array(((line.contains(UInt8(ascii: "?")) ? "&" : "?") + query).utf8)
            } else {
                out += line
            }
        }
        return out
    }
}
