import Foundation
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayTestSupport
import Testing

/// The MP3 pass-through mount of the real binary, with real clients: curl asks for titles in band, ffmpeg decodes the
/// stream while the upstream goes away and comes back. (In the serialized `ServerProcessTests` suite.)
extension ServerProcessTests {
    /// Requests the upstream has had: the first ends after 6 s of audio, the second is refused, the rest stream.
    final class Requests: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func next() -> Int {
            lock.lock()
            defer { lock.unlock() }
            count += 1
            return count
        }
    }

    @Test(.enabled(if: tool("ffmpeg") != nil && tool("curl") != nil, "needs ffmpeg and curl (`.ci/deps --test`)"))
    func curlGetsTitlesInBandAndFFmpegDecodesTheMP3MountAcrossAnOutage() throws {
        let audio = try Fixture.bytes("stereo-44k-128k.mp3")
        let loops = Array([[UInt8]](repeating: audio, count: 12).joined())  // 36 s
        let requests = Requests()
        let upstream = try HTTPTestServer { _ in
            let number = requests.next()
            if number == 2 { return .init(status: 503) }
            // A new title every 8 blocks of 4 096 bytes (2 s); the first connection ends after 6 s of audio.
            let body = icyStream(number == 1 ? Array(loops.prefix(98_400)) : loops, interval: 4096) {
                $0 % 8 == 0 ? "Connection \(number) song \($0 / 8)" : nil
            }
            return .init(headers: ["icy-metaint": "4096"], body: body, pace: 16_400)
        }
        defer { upstream.stop() }
        let rig = try ServedStation(
            upstream: upstream.baseURL + "/live.mp3", ["--mp3", "yes", "--reconnect-max", "2", "--log-level", "debug"])
        defer { rig.stop() }
        try #require(waitUntil(10) { rig.server.log.contains("now playing:") }, "no title:\n\(rig.server.log)")
        let url = "http://127.0.0.1:\(rig.http)/test.mp3"
        let directory = try PeerTests.HTTPPlayerTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let decoded = directory.appendingPathComponent("out.f32").path
        let ffmpeg = Background {
            try run(
                try #require(tool("ffmpeg")),
                ["-nostdin", "-v", "error", "-i", url, "-t", "16", "-f", "f32le", "-ac", "2", "-ar", "48000", decoded])
        }
        let headers = directory.appendingPathComponent("headers").path
        let body = directory.appendingPathComponent("body").path
        let curl = try run(
            try #require(tool("curl")), ["-s", "-m", "12", "-H", "Icy-MetaData: 1", "-D", headers, "-o", body, url])
        #expect(curl.status == 28, "curl ends at its time limit: \(curl.stderr)")  // 28: the -m limit
        let head = (try? String(contentsOfFile: headers, encoding: .utf8)) ?? ""
        #expect(head.contains("Content-Type: audio/mpeg") && head.contains("icy-metaint: 16000"), "\(head)")
        var demuxer = ICYDemuxer(interval: 16_000)
        var inBand = 0
        var titles: [String] = []
        let bytes = try Data(contentsOf: URL(fileURLWithPath: body))
        bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            demuxer.demux(raw, audio: { inBand += $0.count }, metadata: { titles.append($0["StreamTitle"] ?? "?") })
        }
        print(
            "mp3 mount, curl -H 'Icy-MetaData: 1' for 12 s: \(bytes.count) bytes, \(inBand) of audio, "
                + "\(demuxer.lengthBytes) blocks, titles \(titles)")
        #expect(demuxer.lengthBytes == inBand / 16_000 && demuxer.lengthBytes >= 10)
        #expect(titles.count >= 3 && Set(titles).count == titles.count, "\(titles)")
        #expect(titles.contains { $0.hasPrefix("Connection 3 song") }, "no title after the outage: \(titles)")

        let result = try ffmpeg.value()
        #expect(result.status == 0, "ffmpeg: \(result.stderr)")
        let samples = PeerTests.HTTPPlayerTests.floats((try? Data(contentsOf: URL(fileURLWithPath: decoded))) ?? Data())
        let tones = PeerTests.HTTPPlayerTests.tones(interleaved: samples)
        // Silence: 100 ms windows whose left channel stays below -60 dB.
        var silent = 0
        var window = 0
        while (window + 1) * 9_600 <= samples.count {
            let range = (window * 9_600)..<((window + 1) * 9_600)
            if stride(from: range.lowerBound, to: range.upperBound, by: 2).allSatisfy({ abs(samples[$0]) < 0.001 }) {
                silent += 1
            }
            window += 1
        }
        print(
            "mp3 mount, ffmpeg for 16 s across the outage: \(tones), \(Double(silent) / 10) s of it silent; "
                + "ffmpeg said: \(result.stderr.isEmpty ? "nothing" : result.stderr)")
        #expect(tones.seconds >= 15.9, "\(tones.seconds) s decoded")
        #expect(abs(tones.left440 - 0.475) < 0.05 && abs(tones.right1000 - 0.475) < 0.05, "\(tones)")
        // The outage (the first connection's end, a refusal, the reconnect) was filled with silence, not a gap.
        #expect(silent >= 10 && silent <= 60, "\(silent) silent windows")
        let station = try rig.station()
        #expect(station.reconnects >= 2, "\(station)")
    }
}
