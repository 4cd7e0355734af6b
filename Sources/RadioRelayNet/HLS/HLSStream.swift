import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// One output's live HLS stream, shared by the pipeline thread (which feeds it the pages it publishes to the
/// output's listeners, so the segments hold the very packets they get: no second encode) and the HTTP front end
/// (which answers from its `snapshot`). The rules are `HLSSegmenter`'s and `HLSPlaylist`'s; this keeps one under a
/// lock and publishes an immutable `HLSSnapshot` each time a segment closes, so a request costs a lock and a
/// lookup whatever the audience.
package final class HLSStream: Sendable, Equatable {
    private struct State {
        var splitter = OggPacketSplitter()
        var segmenter: HLSSegmenter
        var snapshot: HLSSnapshot
    }

    package let settings: HLSSegmenter.Settings
    /// Names this run's segments (its start time in milliseconds, base 36).
    package let token: String
    private let state: LockedBox<State>
    /// HLS answers given from it (200, 304, HEAD), and 404s for names not or no longer there (status, metrics).
    package let answered = Atomic<Int>(0)
    package let notFound = Atomic<Int>(0)
    /// Its players' sessions (the HTTP front end notes each answer).
    private let sessions = LockedBox(HLSSessions())

    /// An answer (200 or 304) of `bytes` went to `key`: the entry of its session, or nil when it has none.
    package func answered(_ key: HLSSessions.Key, bytes: Int, now: Double = monotonicNow()) -> ListenerEntry? {
        sessions.withLock { $0.answered(key, bytes: bytes, now: now) }
    }

    /// Starts a session (`HLSSessions.begin`).
    package func begin(
        _ key: HLSSessions.Key, entry: ListenerEntry, request: ListenerRequest, bytes: Int,
        now: Double = monotonicNow()
    ) -> (kept: Bool, ended: HLSSessions.Session?) {
        sessions.withLock { $0.begin(key, entry: entry, request: request, bytes: bytes, now: now) }
    }

    /// The sessions that ended by `now` (`HLSSessions.end`), taken out.
    package func endSessions(now: Double, all: Bool = false) -> [HLSSessions.Session] {
        sessions.withLock { $0.end(now: now, all: all) }
    }

    /// The session of listener `id`, taken out (an admin's kick).
    package func endSession(id: ListenerID) -> HLSSessions.Session? { sessions.withLock { $0.end(id: id) } }

    /// The live sessions (all, or listener `id`'s), taken out (`HLSSessions.take`: an admin's move).
    package func takeSessions(id: ListenerID?, now: Double = monotonicNow()) -> [(
        key: HLSSessions.Key, session: HLSSessions.Session
    )] {
        sessions.withLock { $0.take(id: id, now: now) }
    }

    /// Puts back a session `takeSessions` took.
    package func restore(_ key: HLSSessions.Key, _ session: HLSSessions.Session) {
        sessions.withLock { $0.restore(key, session) }
    }

    /// The sessions with an answer within `HLSSessions.window` seconds.
    package func playerCount(now: Double = monotonicNow()) -> Int { sessions.withLock { $0.count(now: now) } }

    /// Sessions kept, ended ones not yet taken out included.
    package var sessionsKept: Int { sessions.withLock { $0.kept } }

    /// - Parameter now: the wall clock at the start (Unix seconds): the token, and the first media sequence number
    ///   (the seconds since the epoch over the segment length), so numbers keep rising across restarts.
    package init(settings: HLSSegmenter.Settings, now: Double = wallClockNow()) {
        self.settings = settings
        let start = now.isFinite ? min(max(0, now), 1e11) : 0
        token = String(UInt64(start * 1000), radix: 36)
        let first = Int(start / max(0.1, settings.segmentSeconds))
        let segmenter = HLSSegmenter(settings, firstSequence: first)
        state = LockedBox(State(segmenter: segmenter, snapshot: HLSSnapshot(token: token, settings: settings)))
    }

    package static func == (lhs: HLSStream, rhs: HLSStream) -> Bool { lhs === rhs }

    /// What the HTTP front end answers from: the playlist and the segments as of the last one closed.
    package var snapshot: HLSSnapshot { state.withLock { $0.snapshot } }

    package var statistics: HLSSegmenter.Statistics { state.withLock { $0.segmenter.statistics } }

    /// Bytes of segments held now (the window, what stays fetchable after it, and the init segments).
    package var heldBytes: Int {
        let snapshot = snapshot
        return snapshot.segments.reduce(0) { $0 + $1.bytes.count } + snapshot.maps.reduce(0) { $0 + $1.bytes.count }
    }

    /// The first link's header pages (OpusHead, OpusTags), as the output's ring gets them.
    package func setHeaders(_ pages: [OggPage], now: Double = wallClockNow()) {
        take(pages, now: now)
    }

    /// Pages the output published (a later link's header pages among them).
    package func publish(_ pages: [OggPage], now: Double = wallClockNow()) {
        take(pages, now: now)
    }

    /// A new title from the upstream, from the next packet on.
    package func title(_ title: String, now: Double = wallClockNow()) {
        state.withLock { $0.segmenter.title(title, now: now) }
    }

    private func take(_ pages: [OggPage], now: Double) {
        state.withLock { state in
            var closed = false
            for page in pages {
                if page.startsUpstreamStream {
                    state.segmenter.restart(now: now)
                    closed = true
                }
                for packet in state.splitter.packets(of: page.bytes) {
                    if packet.starts(with: Self.opusHead) {
                        state.segmenter.start(headPacket: packet, now: now)
                        closed = true
                    } else if packet.starts(with: Self.opusTags) {
                        continue
                    } else if state.segmenter.append(packet, now: now) {
                        closed = true
                    }
                }
            }
            if closed { state.snapshot = HLSSnapshot(token: token, segmenter: state.segmenter) }
        }
    }

    private static let opusHead = Array("OpusHead".utf8)
    private static let opusTags = Array("OpusTags".utf8)
}

/// An `HLSStream` at one moment: its media playlist's text, the segments that can still be fetched and their init
/// segments, and the bandwidth its segments took (for the multivariant playlist). Immutable; the arrays are shared.
package struct HLSSnapshot: Sendable {
    package let token: String
    package let settings: HLSSegmenter.Settings
    package let playlist: [UInt8]
    package let segments: [HLSSegmenter.Segment]
    package let maps: [HLSSegmenter.InitSegment]
    /// The newest segment's sequence number and when it was made (the playlist's `Last-Modified`); -1 and 0 before.
    package let newest: Int
    package let updated: Double
    /// Bits per second: the largest segment's in the playlist, and the playlist's over its duration (0 before any).
    package let peakBandwidth: Int
    package let averageBandwidth: Int
    package let channels: Int

    init(token: String, settings: HLSSegmenter.Settings) {
        self.token = token
        self.settings = settings
        playlist = []
        segments = []
        maps = []
        newest = -1
        updated = 0
        peakBandwidth = 0
        averageBandwidth = 0
        channels = 2
    }

    init(token: String, segmenter: HLSSegmenter) {
        self.token = token
        settings = segmenter.settings
        let listed = segmenter.playlistSegments
        playlist = listed.isEmpty ? [] : Array(HLSPlaylist.media(segmenter, token: token).utf8)
        segments = segmenter.segments
        maps = segmenter.maps
        newest = segmenter.segments.last?.sequence ?? -1
        updated = segmenter.segments.last?.made ?? 0
        var peak = 0.0
        var bytes = 0
        var seconds = 0.0
        for segment in listed where segment.seconds > 0 {
            peak = max(peak, Double(segment.bytes.count * 8) / segment.seconds)
            bytes += segment.bytes.count
            seconds += segment.seconds
        }
        peakBandwidth = Int(peak.rounded(.up))
        averageBandwidth = seconds > 0 ? Int((Double(bytes * 8) / seconds).rounded(.up)) : 0
        channels = segmenter.maps.last?.head.channels ?? 2
    }

    /// The segment numbered `sequence`, while it can be fetched.
    package func segment(_ sequence: Int) -> HLSSegmenter.Segment? {
        guard let first = segments.first?.sequence, sequence >= first else { return nil }
        let (index, overflow) = sequence.subtractingReportingOverflow(first)
        guard !overflow, index < segments.count, segments[index].sequence == sequence else { return nil }
        return segments[index]
    }

    package func initSegment(_ id: Int) -> HLSSegmenter.InitSegment? { maps.first { $0.id == id } }
}
