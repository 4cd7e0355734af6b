import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayTestSupport
import Testing

/// Log lines a peer can cause at will, flooded against the binary: an upstream that changes its MP3 format every
/// three frames (13 times a second), listeners that connect and leave 600 times, event subscribers that come and go
/// 200 times. Each kind of line is rate-limited, with a count of what was left out; the station keeps serving. (The
/// network loops' window is ten seconds and the machines have two cores: at most 10 lines per kind per loop per
/// window.)
/// (In the serialized `ServerProcessTests` chain: it blocks on real time.)
extension ServerProcessTests {
    /// The MP3 frames of `bytes` (whole frames only, each followed by another header or the end).
    static func mp3Frames(_ bytes: [UInt8]) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var index = 0
        while index + 4 <= bytes.count {
            if let header = MP3FrameHeader(bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3]),
                header.frameLength > 4, index + header.frameLength <= bytes.count
            {
                frames.append(Array(bytes[index..<index + header.frameLength]))
                index += header.frameLength
            } else {
                index += 1
            }
        }
        return frames
    }

    @Test func linesAPeerCanCauseAtWillAreRateLimited() throws {
        let stereo = Self.mp3Frames(try Fixture.bytes("stereo-44k-128k.mp3"))
        let mono = Self.mp3Frames(try Fixture.bytes("mono-48k.mp3"))
        try #require(stereo.count > 20 && mono.count > 20)
        var alternating: [UInt8] = []
        for group in 0..<200 {
            let source = group % 2 == 0 ? stereo : mono
            let start = 1 + (group / 2 * 3) % (source.count - 4)  // past the first (a LAME Info frame)
            for frame in source[start..<start + 3] { alternating += frame }
        }
        let body = alternating
        let upstream = try HTTPTestServer { _ in
            .init(headers: ["Content-Type": "audio/mpeg"], body: body, pace: 14_000, holdOpen: 10)
        }
        defer { upstream.stop() }
        let station = try ServedStation(upstream: upstream.baseURL + "/flip.mp3", ["--max-per-ip", "0"])
        defer { station.stop() }
        let started = Date()
        for _ in 0..<6 {
            let batch = try (0..<100).map { _ in try ListenerClient(port: station.port) }
            usleep(50_000)
            for client in batch { client.close() }
        }
        for _ in 0..<2 {
            let batch = try (0..<100).map { _ in try ListenerClient(port: station.http) }
            for client in batch { client.send("GET /test/events HTTP/1.1\r\nHost: x\r\n\r\n") }
            usleep(100_000)
            for client in batch { client.close() }
        }
        // Let the format flood run on past the loops' ten-second window (when the counts of what was left out are
        // written), with a listener on the stream all along.
        let listener = try ListenerClient(port: station.port)
        defer { listener.close() }
        let (bytes, closed) = listener.read(for: max(1, 11 - Date().timeIntervalSince(started)))
        let capture = try LiveCapture(bytes)
        #expect(!closed && capture.headerOK && capture.sequenceGaps == 0)
        let seconds = Date().timeIntervalSince(started) + 1
        let lines = station.server.log.split(separator: "\n")
        func count(_ text: String) -> Int { lines.filter { $0.contains(text) }.count }
        let formats = count("upstream format")
        #expect(count("more upstream format changes in 1 s") >= 1, "\(station.server.log)")
        #expect(formats >= 3 && Double(formats) <= 2 * seconds + 2, "\(formats) format lines in \(seconds) s")
        // Ten lines per kind per ten seconds in each network loop, then one line with the count.
        let connects = count("tcp listener #") - count(" left after ")
        let loops = 2
        #expect(connects <= 10 * 2 * loops, "\(connects) connect lines")
        #expect(count(" left after ") <= 10 * 2 * loops, "\(count(" left after ")) leave lines")
        #expect(count("listener connects repeated") >= 1, "\(station.server.log)")
        // The front end is one loop: ten subscription and leave lines, then a count.
        let subscriptions = lines.filter { $0.contains("http: events #") }
        #expect(subscriptions.count <= 10, "\(subscriptions.count) subscription lines")
        #expect(count("event subscriptions and leaves repeated") >= 1, "\(station.server.log)")
        #expect(lines.count < 400, "\(lines.count) lines in all")
    }
}
