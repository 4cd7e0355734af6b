import RadioRelaySystem

/// The archive's HLS media playlists (`/NAME/archive.m3u8`, CMAF fMP4; `archive-ts.m3u8`, MPEG-TS): 10 s segments on
/// the UTC clock (`ArchiveSegment`), each named by its start in Unix seconds (`archive-1796457600.m4s`, `.ts`, so a
/// name always means the same audio), numbered by that start over 10 (the media sequence never goes back), with
/// `EXT-X-PROGRAM-DATE-TIME` on each, so a player can seek through the whole window. The window is bounded: the last
/// `window` seconds the archive holds (a live playlist that grows, which players start at its live end), or, with
/// `start`, the window from there to the newest audio at most (a closed one, `EXT-X-PLAYLIST-TYPE:VOD` and
/// `EXT-X-ENDLIST`, which every player seeks in — ffmpeg's and so mpv's HLS demuxer seeks in no live playlist, and
/// in no fMP4 one: the MPEG-TS playlist is for them): a week of 10 s segments is 60 480 entries, three hours 1 080.
/// A segment the archive has no audio for (a gap) is listed with `EXT-X-GAP`. A pure value (tests:
/// `ArchiveHLSTests`); times are ms since the epoch.
package enum ArchivePlaylist {
    package static let window: Int64 = 3 * 3600 * 1000
    package static let initName = "archive-init.mp4"

    /// How the segments are packed: CMAF fMP4 (`archive.m3u8`: browsers, VLC, Safari) or MPEG-TS
    /// (`archive-ts.m3u8`: ffmpeg's HLS demuxer, and so mpv, seeks in this one only).
    package enum Container: Sendable {
        case fmp4, ts

        var suffix: String { self == .fmp4 ? ".m4s" : ".ts" }
        package var contentType: String { self == .fmp4 ? "audio/mp4" : "video/mp2t" }

        /// The container whose playlist `name` is.
        package init?(playlist name: some StringProtocol) {
            switch name {
            case "archive.m3u8": self = .fmp4
            case "archive-ts.m3u8": self = .ts
            default: return nil
            }
        }
    }

    package static func segmentName(_ start: Int64, _ container: Container = .fmp4) -> String {
        "archive-\(start / 1000)\(container.suffix)"
    }

    /// The start (ms) and container of the segment `name` names, when it is one of ours.
    package static func segment(_ name: Substring) -> (start: Int64, container: Container)? {
        guard name.hasPrefix("archive-") else { return nil }
        let container: Container
        if name.hasSuffix(Container.fmp4.suffix) {
            container = .fmp4
        } else if name.hasSuffix(Container.ts.suffix) {
            container = .ts
        } else {
            return nil
        }
        let digits = name.dropFirst("archive-".count).dropLast(container.suffix.count)
        guard !digits.isEmpty, digits.count <= 12, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let seconds = Int64(digits), seconds % ArchiveSegment.seconds == 0
        else { return nil }
        return (seconds * 1000, container)
    }

    /// The playlist of `index` (nil when it holds no whole segment in the window asked for), its segments in
    /// `container` (MPEG-TS needs no init segment: no `EXT-X-MAP`, version 3).
    package static func media(_ index: ArchiveIndex, start: Int64? = nil, container: Container = .fmp4) -> String? {
        guard let range = index.range else { return nil }
        let step = ArchiveSegment.seconds * 1000
        let first = (range.lowerBound + step - 1) / step * step
        let newest = range.upperBound / step * step
        var from = max(first, newest - window)
        var closed = false
        if let start {
            from = max(first, start / step * step)
            closed = true
        }
        let to = closed ? min(from + window, newest) : newest
        guard from < to else { return nil }
        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:\(container == .fmp4 ? 7 : 3)",
            "#EXT-X-TARGETDURATION:\(ArchiveSegment.seconds)", "#EXT-X-MEDIA-SEQUENCE:\(from / step)",
        ]
        if closed { lines.append("#EXT-X-PLAYLIST-TYPE:VOD") }
        lines.append("#EXT-X-INDEPENDENT-SEGMENTS")
        if container == .fmp4 { lines.append("#EXT-X-MAP:URI=\"\(initName)\"") }
        let gaps = index.gaps
        var slot = from
        while slot < to {
            lines.append("#EXT-X-PROGRAM-DATE-TIME:\(UTCTime(Double(slot) / 1000).iso8601)")
            let middle = slot + step / 2
            if gaps.contains(where: { $0.contains(middle) }) { lines.append("#EXT-X-GAP") }
            lines.append("#EXTINF:\(ArchiveSegment.seconds).000,")
            lines.append(segmentName(slot, container))
            slot += step
        }
        if closed { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }
}
