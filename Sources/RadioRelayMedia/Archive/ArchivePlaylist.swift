import RadioRelaySystem

/// The archive's HLS media playlist (`/NAME/archive.m3u8`): 10 s segments on the UTC clock (`ArchiveSegment`), each
/// named by its start in Unix seconds (`archive-1796457600.m4s`, so a name always means the same audio), numbered by
/// that start over 10 (the media sequence never goes back), with `EXT-X-PROGRAM-DATE-TIME` on each, so a player can
/// seek through the whole window. The window is bounded: the last `window` seconds the archive holds (a live
/// playlist that grows, which players start at its live end), or, with `start`, the window from there to the newest
/// audio at most (a closed one, `EXT-X-PLAYLIST-TYPE:VOD` and `EXT-X-ENDLIST`, which every player seeks in — ffmpeg's
/// and so mpv's HLS demuxer seeks in no live playlist): a week of 10 s segments is 60 480 entries, three hours
/// 1 080. A segment the archive has no audio for (a gap) is listed with `EXT-X-GAP`. A pure value (tests:
/// `ArchiveHLSTests`); times are ms since the epoch.
package enum ArchivePlaylist {
    package static let window: Int64 = 3 * 3600 * 1000
    package static let initName = "archive-init.mp4"

    package static func segmentName(_ start: Int64) -> String { "archive-\(start / 1000).m4s" }

    /// The start (ms) of the segment `name` names, when it is one of ours.
    package static func segmentStart(_ name: Substring) -> Int64? {
        guard name.hasPrefix("archive-"), name.hasSuffix(".m4s") else { return nil }
        let digits = name.dropFirst("archive-".count).dropLast(".m4s".count)
        guard !digits.isEmpty, digits.count <= 12, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let seconds = Int64(digits), seconds % ArchiveSegment.seconds == 0
        else { return nil }
        return seconds * 1000
    }

    /// The playlist of `index` (nil when it holds no whole segment in the window asked for).
    package static func media(_ index: ArchiveIndex, start: Int64? = nil) -> String? {
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
            "#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(ArchiveSegment.seconds)",
            "#EXT-X-MEDIA-SEQUENCE:\(from / step)",
        ]
        if closed { lines.append("#EXT-X-PLAYLIST-TYPE:VOD") }
        lines += ["#EXT-X-INDEPENDENT-SEGMENTS", "#EXT-X-MAP:URI=\"\(initName)\""]
        let gaps = index.gaps
        var slot = from
        while slot < to {
            lines.append("#EXT-X-PROGRAM-DATE-TIME:\(UTCTime(Double(slot) / 1000).iso8601)")
            let middle = slot + step / 2
            if gaps.contains(where: { $0.contains(middle) }) { lines.append("#EXT-X-GAP") }
            lines.append("#EXTINF:\(ArchiveSegment.seconds).000,")
            lines.append(segmentName(slot))
            slot += step
        }
        if closed { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }
}
