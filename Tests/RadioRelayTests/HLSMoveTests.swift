import Testing

@testable import RadioRelayMedia
@testable import RadioRelayNet

/// A moved HLS player's playlist (`HLSMove`) on virtual time: it goes on from its old stream's segments to the
/// destination's after one discontinuity, every segment keeps its media sequence number from one reload to the next
/// (RFC 8216 §6.2.2), and the discontinuity sequence counts the tag once it leaves the top.
@Suite struct HLSMoveTests {
    static let start = 1_800_000_000.0

    /// A stream fed `seconds` of 20 ms packets from `start` (one 2 s segment closes every 2 s).
    final class Fed {
        let stream: HLSStream
        var clock: Double

        init(byte: UInt8) {
            stream = HLSStream(settings: HLSSegmenter.Settings(), now: HLSMoveTests.start)
            clock = HLSMoveTests.start
            stream.setHeaders(
                [OggPage(bytes: PublicHLSTests.page([OpusRepager.defaultHead(channels: 2)]))], now: clock)
            packet = [0xFC] + [UInt8](repeating: byte, count: 99)
        }

        let packet: [UInt8]

        func play(_ seconds: Int) {
            for _ in 0..<seconds * 10 {
                clock += 0.1
                stream.publish([OggPage(bytes: PublicHLSTests.page(Array(repeating: packet, count: 5)))], now: clock)
            }
        }
    }

    /// The playlist's segments as (media sequence, URI), and its discontinuity sequence; where the tags are.
    static func read(_ playlist: [UInt8]) -> (segments: [(Int, String)], discontinuity: Int, tags: [Int]) {
        var sequence = 0
        var discontinuity = 0
        var segments: [(Int, String)] = []
        var tags: [Int] = []
        for line in String(decoding: playlist, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") { sequence = Int(line.dropFirst(22)) ?? -1 }
            if line.hasPrefix("#EXT-X-DISCONTINUITY-SEQUENCE:") { discontinuity = Int(line.dropFirst(30)) ?? -1 }
            if line == "#EXT-X-DISCONTINUITY" { tags.append(sequence + segments.count) }
            if !line.hasPrefix("#") { segments.append((sequence + segments.count, String(line))) }
        }
        return (segments, discontinuity, tags)
    }

    @Test func thePlayerGoesOnFromItsStreamToTheDestinationsOnce() throws {
        let a = Fed(byte: 1)
        let b = Fed(byte: 2)
        a.play(20)
        b.play(21)  // another phase: b runs a little ahead
        var move = HLSMove(
            id: ListenerID(7), source: a.stream.snapshot, destination: b.stream.snapshot, prefix: "../b/")
        let lastA = a.stream.snapshot.newest
        // Until b closes a segment, the player is shown a's last ones.
        let first = move.playlist(source: a.stream.snapshot, destination: b.stream.snapshot)
        let before = try #require(first)
        #expect(Self.read(before).segments.last?.0 == lastA && Self.read(before).tags.isEmpty)
        var seen: [Int: String] = [:]
        var sawBoth = false
        for _ in 0..<12 {
            a.play(2)
            b.play(2)
            let listed = move.playlist(source: a.stream.snapshot, destination: b.stream.snapshot)
            let playlist = try #require(listed)
            let (segments, discontinuity, tags) = Self.read(playlist)
            #expect(segments.count <= 6)
            for (sequence, uri) in segments {
                // A number names one segment for good.
                if let known = seen[sequence] { #expect(known == uri, "segment \(sequence)") }
                seen[sequence] = uri
                #expect(uri.hasPrefix("../b/") == (sequence > lastA), "\(sequence) \(uri)")
            }
            #expect(zip(segments, segments.dropFirst()).allSatisfy { $0.0 + 1 == $1.0 })
            if segments.first?.0 ?? 0 <= lastA {
                if segments.last?.0 ?? 0 > lastA {
                    sawBoth = true
                    #expect(tags == [lastA + 1], "one tag, before b's first")
                }
                #expect(discontinuity == 0)
            } else if segments.first?.0 == lastA + 1 {
                #expect(tags == [lastA + 1] && discontinuity == 0, "the tag at the top, not yet counted")
            } else {
                #expect(tags.isEmpty && discontinuity == 1, "the tag left the top: counted")
            }
        }
        #expect(sawBoth)
        // a's segments are its own names; b's are b's, named by b's token.
        #expect(seen[lastA] == HLSPlaylist.segmentName(token: a.stream.snapshot.token, sequence: lastA))
        let firstB = try #require(seen[lastA + 1])
        #expect(firstB == "../b/" + HLSPlaylist.segmentName(token: b.stream.token, sequence: move.destinationFirst))
    }

    @Test func nothingToListYetIsNil() {
        let a = Fed(byte: 1)
        let b = Fed(byte: 2)
        var move = HLSMove(
            id: ListenerID(1), source: a.stream.snapshot, destination: b.stream.snapshot, prefix: "../b/")
        let listed = move.playlist(source: a.stream.snapshot, destination: b.stream.snapshot)
        #expect(listed == nil)
        #expect(move.sequence(ofDestination: move.destinationFirst) == a.stream.snapshot.newest + 1)
    }
}
