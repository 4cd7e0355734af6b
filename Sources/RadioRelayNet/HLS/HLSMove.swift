import RadioRelayMedia
import RadioRelaySystem

/// An HLS player moved to another stream (`moveclients`), as a pure value: the player goes on reloading the playlist
/// URL it has, and is answered a playlist of its own that goes on where its last one ended — the old stream's
/// segments it was shown, then, after an `EXT-X-DISCONTINUITY` and the destination's `EXT-X-MAP`, the destination's
/// segments from the first one completed after the move, renumbered so that its media sequence goes on rising by one.
/// The destination's segments are named by their own URLs (`../b/TOKEN-SEQ.m4s`), so they come from the
/// destination's stream and count there; as the window slides, only the destination's are left.
///
/// RFC 8216 §6.2.2: the media sequence of each segment never changes between reloads, and
/// `EXT-X-DISCONTINUITY-SEQUENCE` counts the discontinuity tags that left the top of the list.
package struct HLSMove: Sendable {
    /// The player's session on the destination (its ID).
    package let id: ListenerID
    /// The newest segment of the old stream when it moved: the last it is shown from there.
    package let sourceLast: Int
    /// That segment's discontinuity sequence number.
    package let sourceDiscontinuity: Int
    /// The first of the destination's segments it is shown (the next one completed there).
    package let destinationFirst: Int
    /// The discontinuity sequence number of the destination's newest segment at the move.
    package let destinationDiscontinuity: Int
    /// The destination's directory relative to the old one's (`../b/`).
    package let prefix: String
    /// Whether the destination's first segment after the move began a discontinuity of its own (1: its tag and the
    /// move's are one), noted at the first playlist that lists it.
    private var firstOwn: Int?

    package init(id: ListenerID, source: HLSSnapshot, destination: HLSSnapshot, prefix: String) {
        self.id = id
        sourceLast = source.newest
        sourceDiscontinuity = source.segments.last?.discontinuitySequence ?? 0
        destinationFirst = destination.newest + 1
        destinationDiscontinuity = destination.segments.last?.discontinuitySequence ?? 0
        self.prefix = prefix
    }

    /// The player's sequence number for the destination's segment `sequence`.
    package func sequence(ofDestination sequence: Int) -> Int {
        sourceLast &+ 1 &+ (sequence &- destinationFirst)
    }

    /// The player's playlist now: nil when there is nothing to list yet (the destination's first segment after the
    /// move is not made, and the old stream's are gone).
    package mutating func playlist(source: HLSSnapshot, destination: HLSSnapshot) -> [UInt8]? {
        if firstOwn == nil, let first = destination.segment(destinationFirst) { firstOwn = first.discontinuity ? 1 : 0 }
        let window = max(1, destination.settings.window)
        let ahead = destination.segments.filter { $0.sequence >= destinationFirst }.suffix(window)
        let room = window - ahead.count
        let behind =
            room > 0
            ? Array(
                source.segments.filter { $0.sequence <= sourceLast && $0.sequence > sourceLast - window }.suffix(room))
            : []
        guard let firstSequence = behind.first?.sequence ?? ahead.first.map({ sequence(ofDestination: $0.sequence) })
        else { return nil }
        let target = max(source.settings.targetDuration, destination.settings.targetDuration)
        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(target)", "#EXT-X-MEDIA-SEQUENCE:\(firstSequence)",
        ]
        let discontinuities: Int
        if let first = behind.first {
            discontinuities = first.discontinuitySequence - (first.discontinuity ? 1 : 0)
        } else if let first = ahead.first {
            discontinuities = number(of: first) - (tagged(first) ? 1 : 0)
        } else {
            discontinuities = 0
        }
        if discontinuities > 0 { lines.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuities)") }
        lines.append("#EXT-X-INDEPENDENT-SEGMENTS")
        var map: Int?
        for segment in behind {
            if segment.discontinuity { lines.append("#EXT-X-DISCONTINUITY") }
            if segment.map != map {
                map = segment.map
                lines.append("#EXT-X-MAP:URI=\"\(HLSPlaylist.initName(token: source.token, id: segment.map))\"")
            }
            append(segment, name: HLSPlaylist.segmentName(token: source.token, sequence: segment.sequence), to: &lines)
        }
        map = nil
        for segment in ahead {
            if tagged(segment) { lines.append("#EXT-X-DISCONTINUITY") }
            if segment.map != map {
                map = segment.map
                lines.append(
                    "#EXT-X-MAP:URI=\"\(prefix)\(HLSPlaylist.initName(token: destination.token, id: segment.map))\"")
            }
            let name = HLSPlaylist.segmentName(token: destination.token, sequence: segment.sequence)
            append(segment, name: prefix + name, to: &lines)
        }
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// Whether a discontinuity tag comes before the destination's segment: the move's, or its own.
    private func tagged(_ segment: HLSSegmenter.Segment) -> Bool {
        segment.sequence == destinationFirst || segment.discontinuity
    }

    /// The player's discontinuity sequence number of the destination's segment: the old stream's last, the move's,
    /// then the destination's own since the move (one tag when the move's and its own fall on the first).
    private func number(of segment: HLSSegmenter.Segment) -> Int {
        let own = max(0, segment.discontinuitySequence &- destinationDiscontinuity)
        return sourceDiscontinuity &+ 1 &+ own &- (firstOwn ?? 0)
    }

    private func append(_ segment: HLSSegmenter.Segment, name: String, to lines: inout [String]) {
        lines.append("#EXT-X-PROGRAM-DATE-TIME:\(HLSPlaylist.iso8601(segment.programDate))")
        lines.append("#EXTINF:\(HLSPlaylist.decimal(segment.seconds)),")
        lines.append(name)
    }
}

/// Where a moved HLS player is known: the stream whose playlist it reloads, and its session's key there.
struct HLSMoveKey: Hashable {
    let stream: ObjectIdentifier
    let key: HLSSessions.Key
}

/// An HLS player moved to another stream: its playlist's rule (`HLSMove`), and the two streams.
struct MovedPlayer {
    var move: HLSMove
    let destination: HLSStream
}
