import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The HLS segmenter's rules on virtual time: whole packets up to the target, decode times running on, the window
/// and what stays fetchable, discontinuities and init segments at new links and new upstream streams, titles as
/// date ranges, program dates, and the bounds on memory.
@Suite struct HLSSegmenterTests {
    /// A 20 ms CELT packet (TOC config 31, stereo, one frame) and a 60 ms one (code 3, three frames).
    static let packet20: [UInt8] = [0xFC] + [UInt8](repeating: 7, count: 99)
    static let packet60: [UInt8] = [0xFF, 3] + [UInt8](repeating: 9, count: 200)
    static let head = OpusRepager.defaultHead()

    /// Feeds `seconds` of `packet` from `start` on the virtual wall clock, the clock advancing with the audio.
    static func feed(
        _ segmenter: inout HLSSegmenter, _ packet: [UInt8], seconds: Double, from start: Double
    ) -> Double {
        let samples = OpusPacketInfo.samples(packet) ?? 960
        var now = start
        for _ in 0..<Int(seconds * 48_000 / Double(samples)) {
            segmenter.append(packet, now: now)
            now += Double(samples) / 48_000
        }
        return now
    }

    @Test func segmentsHoldWholePacketsUpToTheTargetAndDecodeTimesRunOn() {
        for (packet, perSegment) in [(Self.packet20, 96_000), (Self.packet60, 33 * 2_880)] {
            var segmenter = HLSSegmenter(HLSSegmenter.Settings(), firstSequence: 1000)
            segmenter.start(headPacket: Self.head, now: 0)
            _ = Self.feed(&segmenter, packet, seconds: 40, from: 0)
            let segments = segmenter.segments
            // 6 in the playlist, 7 more still fetchable; none longer than 2 s, whole packets.
            #expect(segments.count == 13)
            #expect(segmenter.playlistSegments.count == 6)
            #expect(segments.allSatisfy { $0.samples == perSegment }, "\(segments.map(\.samples))")
            for (earlier, later) in zip(segments, segments.dropFirst()) {
                #expect(later.sequence == earlier.sequence + 1)
                #expect(later.decodeTime == earlier.decodeTime + Int64(earlier.samples))
                #expect(abs(later.programDate - earlier.programDate - earlier.seconds) < 1e-9)
            }
            // A segment closes when the packet after it comes: the last one is still open.
            let packets = 40 * 48_000 / (OpusPacketInfo.samples(packet) ?? 1)
            let closed = (packets - 1) / (perSegment / (OpusPacketInfo.samples(packet) ?? 1))
            #expect(segments.last?.sequence == 1000 + closed - 1)
            let text = HLSPlaylist.media(segmenter, token: "t")
            #expect(text.contains("#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(1000 + closed - 6)\n"))
            #expect(text.contains("#EXT-X-INDEPENDENT-SEGMENTS\n"))
            #expect(text.components(separatedBy: "#EXTINF:").count == 7)
            #expect(!text.contains("DISCONTINUITY"))
        }
    }

    @Test func aNewHeadIsADiscontinuityWithAnInitSegmentOfItsOwn() throws {
        var segmenter = HLSSegmenter(HLSSegmenter.Settings(), firstSequence: 0)
        segmenter.start(headPacket: Self.head, now: 0)
        var now = Self.feed(&segmenter, Self.packet20, seconds: 3, from: 0)
        segmenter.start(headPacket: OpusRepager.defaultHead(channels: 1, preSkip: 120), now: now)
        now = Self.feed(&segmenter, Self.packet20, seconds: 4.5, from: now)
        segmenter.close(now: now)
        // 0–2 s, 2–3 s (cut short by the link), then the new link's 2, 2 and 0.5 s.
        #expect(segmenter.segments.map(\.samples) == [96_000, 48_000, 96_000, 96_000, 24_000])
        #expect(segmenter.segments.map(\.discontinuity) == [false, false, true, false, false])
        #expect(segmenter.segments.map(\.map) == [0, 0, 2, 2, 2])
        let text = HLSPlaylist.media(segmenter, token: "t")
        #expect(text.contains("t-1.m4s\n#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"t-init-2.mp4\"\n"))
        #expect(text.components(separatedBy: "#EXT-X-MAP:").count == 3)
        let second = try #require(segmenter.maps.first { $0.id == 2 })
        #expect(second.head.channels == 1 && second.head.preSkip == 120)
        // Once the discontinuity's segment slides out, the playlist says how many went before.
        now = Self.feed(&segmenter, Self.packet20, seconds: 14, from: now)
        let later = HLSPlaylist.media(segmenter, token: "t")
        #expect(later.contains("#EXT-X-DISCONTINUITY-SEQUENCE:1\n"))
        #expect(!later.contains("#EXT-X-DISCONTINUITY\n"))
        // The first init segment goes with the last segment that needed it, once that is no longer fetchable.
        #expect(segmenter.maps.map(\.id) == [0, 2])
        now = Self.feed(&segmenter, Self.packet20, seconds: 20, from: now)
        #expect(segmenter.maps.map(\.id) == [2])
    }

    @Test func anotherUpstreamStreamIsADiscontinuityWithTheSameHead() throws {
        var segmenter = HLSSegmenter(HLSSegmenter.Settings(), firstSequence: 0)
        segmenter.restart(now: 0)  // nothing to restart before a head
        segmenter.start(headPacket: Self.head, now: 0)
        var now = Self.feed(&segmenter, Self.packet20, seconds: 2.5, from: 0)
        segmenter.restart(now: now)
        now = Self.feed(&segmenter, Self.packet20, seconds: 2, from: now)
        segmenter.close(now: now)
        // The half second gathered before the new stream ends its segment; the new stream's starts after the tag.
        #expect(segmenter.segments.map(\.discontinuity) == [false, false, true])
        #expect(segmenter.segments.map(\.samples) == [96_000, 24_000, 96_000])
        #expect(segmenter.maps.count == 2 && segmenter.maps[0].bytes == segmenter.maps[1].bytes)
    }

    @Test func titlesAreDateRangesOfTheSegmentsTheyStartIn() {
        var segmenter = HLSSegmenter(HLSSegmenter.Settings(), firstSequence: 0)
        segmenter.start(headPacket: Self.head, now: 1_800_000_000)
        var now = Self.feed(&segmenter, Self.packet20, seconds: 3, from: 1_800_000_000)
        segmenter.title("First \"quoted\"\nline", now: now)
        segmenter.title("First \"quoted\"\nline", now: now)  // the same again: nothing new
        now = Self.feed(&segmenter, Self.packet20, seconds: 3, from: now)
        segmenter.title("Second", now: now)
        now = Self.feed(&segmenter, Self.packet20, seconds: 3, from: now)
        #expect(segmenter.titles.map(\.id) == [1, 2])
        let text = HLSPlaylist.media(segmenter, token: "t")
        #expect(
            text.contains(
                "#EXT-X-DATERANGE:ID=\"title-1\",CLASS=\"net.radio-relay.title\","
                    + "START-DATE=\"2027-01-15T08:00:03.000Z\",X-TITLE=\"First 'quoted' line\"\n#EXTINF:2.00000,\nt-1.m4s"
            ))
        #expect(text.contains("START-DATE=\"2027-01-15T08:00:06.000Z\",X-TITLE=\"Second\"\n#EXTINF:2.00000,\nt-3.m4s"))
        // Played on for a minute: the first title left with its segments; the one playing stays.
        now = Self.feed(&segmenter, Self.packet20, seconds: 60, from: now)
        #expect(segmenter.titles.map(\.title) == ["Second"])
        #expect(HLSPlaylist.media(segmenter, token: "t").contains("X-TITLE=\"Second\""))
    }

    @Test func programDatesFollowTheAudioAndMeetTheWallClockAgainWhenTheyDrift() {
        var segmenter = HLSSegmenter(HLSSegmenter.Settings(), firstSequence: 0)
        segmenter.start(headPacket: Self.head, now: 100)
        var now = Self.feed(&segmenter, Self.packet20, seconds: 4, from: 100)
        // The pipeline paused 5 s (the process was stopped): the next segment is dated by the wall clock again.
        now += 5
        now = Self.feed(&segmenter, Self.packet20, seconds: 4, from: now)
        segmenter.close(now: now)
        let dates = segmenter.segments.map(\.programDate)
        #expect(zip(dates, [100, 102, 109, 111]).allSatisfy { abs($0 - $1) < 1e-6 } && dates.count == 4, "\(dates)")
        #expect(segmenter.segments.map(\.decodeTime) == [0, 96_000, 192_000, 288_000])
    }

    @Test func memoryIsBoundedAndNonsenseIsDropped() {
        var settings = HLSSegmenter.Settings()
        settings.maxBytes = 25_000
        var segmenter = HLSSegmenter(settings, firstSequence: 0)
        segmenter.append(Self.packet20, now: 0)  // before any head
        segmenter.start(headPacket: Array("OpusHead".utf8), now: 0)  // too short to be one
        segmenter.start(headPacket: Self.head, now: 0)
        segmenter.append([], now: 0)
        segmenter.append([0xFF], now: 0)  // code 3 without its count byte
        #expect(segmenter.statistics == HLSSegmenter.Statistics(droppedPackets: 3, badHeads: 1, segments: 0))
        _ = Self.feed(&segmenter, Self.packet20, seconds: 30, from: 0)
        // Each segment is 100 packets of 100 bytes and its boxes: two fit in 25 000 bytes.
        #expect(segmenter.segments.count == 2)
        #expect(segmenter.segments.reduce(0) { $0 + $1.bytes.count } <= 25_000)
    }

    @Test func namesBesideThePlaylistAreReadStrictly() {
        #expect(HLSPlaylist.resource("live.m3u8", token: "ab") == .media)
        #expect(HLSPlaylist.resource("master.m3u8", token: "ab") == .multivariant)
        #expect(HLSPlaylist.resource("ab-12.m4s", token: "ab") == .segment(12))
        #expect(HLSPlaylist.resource("ab-init-7.mp4", token: "ab") == .initSegment(7))
        for name in [
            "zz-12.m4s", "ab-.m4s", "ab--1.m4s", "ab-1x.m4s", "ab-9999999999999999999.m4s", "ab-init-.mp4", "ab-12.mp4",
            "LIVE.m3u8", "",
        ] {
            #expect(HLSPlaylist.resource(Substring(name), token: "ab") == nil, "\(name)")
        }
        #expect(HLSPlaylist.iso8601(0) == "1970-01-01T00:00:00.000Z")
        #expect(HLSPlaylist.iso8601(-5) == "1970-01-01T00:00:00.000Z")
        #expect(HLSPlaylist.iso8601(.infinity) == "9999-12-31T23:59:59.000Z")
        #expect(HLSPlaylist.iso8601(.nan) == "1970-01-01T00:00:00.000Z")
        #expect(HLSPlaylist.decimal(1.98) == "1.98000" && HLSPlaylist.decimal(0.0025) == "0.00250")
    }

    /// The output as a player gets it: a station's pages (the encoder's, with a chained link in the middle) through
    /// an `HLSStream`, its playlist and segments written to a directory, and ffmpeg's HLS demuxer and libopus
    /// decoding them: the right tones, the whole duration, no error.
    @Test(.enabled(if: tool("ffmpeg") != nil, "needs ffmpeg (Debian: ffmpeg; `.ci/deps --test`)"))
    func ffmpegDecodesTheSegmentsAcrossALink() throws {
        let (pages, _) = try EncoderLinkTests.encode(links: [150_000: "Second"], seconds: 6, pageDuration: 100)
        let stream = HLSStream(settings: HLSSegmenter.Settings(), now: 1_800_000_000)
        let headerCount = pages.prefix { $0.isHeader }.count
        stream.setHeaders(Array(pages.prefix(headerCount)), now: 1_800_000_000)
        var now = 1_800_000_000.0
        for page in pages.dropFirst(headerCount) {
            stream.publish([page], now: now)
            now += 0.1
        }
        let snapshot = stream.snapshot
        // 0–2, 2–3.14 (the first link ends with the packet that holds sample 150 000: 157 × 960), 3.14–5.14; the
        // rest is still being gathered.
        #expect(snapshot.segments.map(\.samples) == [96_000, 54_720, 96_000])
        #expect(snapshot.segments.map(\.discontinuity) == [false, false, true])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rr-hls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let playlist = String(decoding: snapshot.playlist, as: UTF8.self) + "#EXT-X-ENDLIST\n"
        try Data(playlist.utf8).write(to: directory.appendingPathComponent("live.m3u8"))
        for segment in snapshot.segments {
            let name = HLSPlaylist.segmentName(token: snapshot.token, sequence: segment.sequence)
            try Data(segment.bytes).write(to: directory.appendingPathComponent(name))
        }
        for map in snapshot.maps {
            try Data(map.bytes).write(
                to: directory.appendingPathComponent(HLSPlaylist.initName(token: snapshot.token, id: map.id)))
        }
        let output = directory.appendingPathComponent("out.f32").path
        let result = try run(
            try #require(tool("ffmpeg")),
            [
                "-nostdin", "-v", "error", "-i", directory.appendingPathComponent("live.m3u8").path, "-f", "f32le",
                "-ac",
                "2", "-ar", "48000", output,
            ])
        #expect(result.status == 0 && result.stderr.isEmpty, "ffmpeg: \(result.stderr)")
        let samples = try Data(contentsOf: URL(fileURLWithPath: output)).withUnsafeBytes {
            Array($0.bindMemory(to: Float.self))
        }
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let right = stride(from: 1, to: samples.count, by: 2).map { samples[$0] }
        // 5.14 s, less the pre-skip of each link.
        let seconds = Double(left.count) / 48_000
        #expect(abs(seconds - 5.12) < 0.03, "\(seconds) s decoded")
        for start in stride(from: 4_800, to: left.count - 9_600, by: 9_600) {
            let range = start..<start + 9_600
            let l = toneAmplitude(left, frequency: 440, rate: 48_000, range: range)
            let r = toneAmplitude(right, frequency: 1000, rate: 48_000, range: range)
            #expect(abs(l - 0.5) < 0.06 && abs(r - 0.5) < 0.06, "at \(start): \(l), \(r)")
        }
    }
}
