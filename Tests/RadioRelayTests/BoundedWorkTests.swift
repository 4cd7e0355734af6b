import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// What a hostile upstream costs, on virtual time and without sockets: resynchronisation work per input byte, the
/// page ring's bytes, link and title floods, and a multichannel stream refused.
@Suite struct BoundedWorkTests {
    /// A false capture pattern: version 0, no flags, 255 segments of 255 bytes claimed (a 65 KB page), then bytes
    /// that hold the next false pattern a few dozen bytes on.
    static let falseCandidate: [UInt8] =
        Array("OggS".utf8) + [0, 0] + [UInt8](repeating: 0x11, count: 20) + [255] + [UInt8](repeating: 255, count: 10)

    @Test func falseCapturePatternsCostAtMostTwoCRCBytesPerInputByte() throws {
        var demuxer = OggDemuxer()
        var flood: [UInt8] = []
        while flood.count < 1 << 20 { flood += Self.falseCandidate }
        var events = 0
        var offset = 0
        while offset < flood.count {  // 1 MB in 4 KB reads, as a socket gives it
            let end = min(flood.count, offset + 4096)
            demuxer.demux(Array(flood[offset..<end])) { _ in events += 1 }
            offset = end
        }
        let stats = demuxer.statistics
        #expect(events == 0 && stats.pages == 0)
        #expect(stats.crcBytes <= 2 * flood.count + OggDemuxer.maxCRCCredit, "\(stats.crcBytes) CRC bytes")
        // A real stream after the flood is found again once the last false page's claimed 64 KB have passed.
        let (headers, pages) = try OpusRelayTests.stream(serial: 9, seconds: 10)
        var audio = 0
        let real = headers + pages.flatMap(\.bytes)
        demuxer.demux(real) { event in if case .audio = event { audio += 1 } }
        #expect(audio >= 250, "\(audio) of 500 packets after the flood")
        #expect(demuxer.statistics.crcBytes <= 2 * (flood.count + real.count) + OggDemuxer.maxCRCCredit)
    }

    @Test func realPagesCostOneCRCBytePerByte() throws {
        var demuxer = OggDemuxer()
        let (headers, pages) = try OpusRelayTests.stream(serial: 9, seconds: 5)
        let bytes = headers + pages.flatMap(\.bytes)
        var audio = 0
        for start in stride(from: 0, to: bytes.count, by: 1000) {
            demuxer.demux(Array(bytes[start..<min(bytes.count, start + 1000)])) { event in
                if case .audio = event { audio += 1 }
            }
        }
        #expect(audio == 250 && demuxer.statistics.crcBytes == bytes.count)
    }

    @Test func theRingIsBoundedByBytesToo() throws {
        let ring = PageRing(capacity: 100, maxBytes: 10_000)
        let ogg = try OggStream(serial: 1)
        for index in 0..<50 {
            ogg.append([UInt8](repeating: UInt8(index), count: 1000), granule: Int64(index + 1) * 960)
            ring.publish(ogg.flush())
        }
        #expect(ring.bytesHeld <= 10_000)
        var pages: [SharedPage] = []
        var headers: [SharedPage] = []
        let (oldest, _) = ring.window(into: &pages, headers: &headers)
        #expect(oldest == 50 - Int64(pages.count) && pages.count == 9, "\(pages.count) pages from \(oldest)")
        #expect(pages.map(\.index) == Array(oldest..<50))
        // One page larger than the bound is still held, alone.
        ogg.append([UInt8](repeating: 7, count: 30_000), granule: 51 * 960)
        ring.publish(ogg.flush())
        #expect(ring.window(into: &pages, headers: &headers).oldest == 50 && pages.count == 1)
    }

    /// A snapshot refreshed after each publication (or after many, or after falling out of the ring) holds exactly
    /// what a fresh one does: the same pages, oldest first, with the ring's headers. Pages of varied sizes make the
    /// byte bound drop several at once.
    @Test func aRefreshedSnapshotEqualsAFreshOne() throws {
        let ring = PageRing(capacity: 64, maxBytes: 40_000)
        let ogg = try OggStream(serial: 3)
        var kept = RingSnapshot()
        var sizes = SplitMix64(seed: 7)
        var granule: Int64 = 0
        for round in 0..<600 {
            // Every 7th round publishes a batch; every 97th the snapshot is not refreshed for a while (left behind).
            let batch = round % 7 == 0 ? 5 : 1
            for _ in 0..<batch {
                granule += 960
                ogg.append([UInt8](repeating: 1, count: 200 + Int(sizes.next() % 5000)), granule: granule)
                ring.publish(ogg.flush())
            }
            if round % 97 < 80 { kept.refresh(from: ring) } else { continue }
            var fresh = RingSnapshot()
            fresh.refresh(from: ring)
            #expect(kept.oldest == fresh.oldest && kept.count == fresh.count && kept.head == ring.nextIndex)
            let keptIndices = (kept.oldest..<kept.head).map { kept.page($0)?.index }
            #expect(keptIndices == (fresh.oldest..<fresh.head).map { fresh.page($0)?.index })
            #expect(keptIndices.allSatisfy { $0 != nil })
        }
    }

    /// OpusHead and OpusTags pages of serial `serial` for `head` (its channel count and mapping).
    static func headers(serial: UInt32, channels: Int, family: Int = 0, mapping: [UInt8] = []) throws -> [UInt8] {
        var head = OpusRepager.defaultHead(channels: channels, preSkip: 312)
        head[18] = UInt8(family)
        head += mapping
        let ogg = try OggStream(serial: serial)
        ogg.append(head, granule: 0, beginning: true)
        var bytes = ogg.flush().flatMap(\.bytes)
        ogg.append(Encoder.opusTags(vendor: "test", comments: []), granule: 0)
        bytes += ogg.flush().flatMap(\.bytes)
        ogg.append(OpusRelayHostileTests.packet, granule: 960)
        return bytes + ogg.flush().flatMap(\.bytes)
    }

    /// Heads that alternate stereo and mono 200 times within a second cost one link, the newest head's, and one
    /// log line; a second later the next change gets its link.
    @Test func aFloodOfHeadChangesCostsOneLinkASecond() throws {
        var now = 0.0
        let chain = try OpusRelayChain(OpusRelayChain.Settings(), clock: { now })
        for index in 0..<200 {
            try OpusRelayTests.feed(chain, Self.headers(serial: UInt32(index + 1), channels: index % 2 == 0 ? 1 : 2))
            now += 0.004
        }
        try chain.release(seconds: 10)
        #expect(chain.statistics.links == 1)
        #expect(chain.statistics.linksHeld > 100)
        now = 1.5
        try OpusRelayTests.feed(chain, Self.headers(serial: 1000, channels: 2))
        try chain.release(seconds: 10)
        #expect(chain.statistics.links == 2)
    }

    /// A six-channel upstream (mapping family 1) is refused once, and none of its packets is relayed.
    @Test func aMultichannelUpstreamIsRefused() throws {
        let chain = try OpusRelayChain(OpusRelayChain.Settings(), clock: { 0 })
        let surround = try Self.headers(serial: 5, channels: 6, family: 1, mapping: [4, 2, 0, 4, 1, 2, 3, 5])
        try OpusRelayTests.feed(chain, surround)
        let refusal = try #require(chain.takeRefusal())
        #expect(refusal.contains("6 channels") && refusal.contains("family 1"))
        #expect(chain.takeRefusal() == nil && chain.statistics.packets == 0 && chain.statistics.links == 0)
        // A stereo stream on the next connection is relayed.
        chain.restart()
        try OpusRelayTests.feed(chain, Self.headers(serial: 6, channels: 2))
        #expect(chain.takeRefusal() == nil && chain.statistics.packets == 1)
    }

    @Test func titlesAtMostOnceASecondTheNewestWinning() {
        var throttle = TitleThrottle()
        #expect(throttle.offer("A", now: 0)?.title == "A")
        #expect(throttle.offer("B", now: 0.1) == nil)
        #expect(throttle.offer("C", now: 0.2) == nil)
        #expect(throttle.due(now: 0.9) == nil)
        let shown = throttle.due(now: 1.0)
        #expect(shown?.title == "C" && shown?.skipped == 1)
        #expect(throttle.due(now: 5) == nil)
        #expect(throttle.offer("D", now: 5)?.title == "D")
    }
}

/// The refusal carried out by a running station: a six-channel Ogg Opus file as an edge's upstream ends each
/// connection with the reason (as its last error), and listeners keep the station's own valid stereo stream.
@Suite(.timeLimit(.minutes(1))) struct MultichannelStationTests {
    @Test func aSixChannelUpstreamIsRefusedWithItsReason() throws {
        var bytes = try BoundedWorkTests.headers(
            serial: 5, channels: 6, family: 1, mapping: [4, 2, 0, 4, 1, 2, 3, 5])
        let ogg = try OggStream(serial: 5)
        for index in 2..<100 {
            ogg.append(OpusRelayHostileTests.packet, granule: Int64(index) * 960)
            bytes += ogg.flush().flatMap(\.bytes)
        }
        let path = temporaryPath("six.opus")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let station = try StationTests.station(upstream: path)
        try station.start()
        defer { station.stop() }
        let deadline = monotonicNow() + 10
        while station.state.lastError == nil && monotonicNow() < deadline { usleep(20_000) }
        let error = try #require(station.state.lastError)
        #expect(error.contains("6 channels") && error.contains("mapping family 1"), "\(error)")
        let listener = try ListenerClient(port: station.port)
        defer { listener.close() }
        let (received, closed) = listener.read(for: 0.5)
        let capture = try LiveCapture(received)
        #expect(!closed && capture.headerOK && capture.sequenceGaps == 0)
    }
}
