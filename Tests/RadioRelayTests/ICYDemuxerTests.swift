import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

@Suite struct ICYDemuxerTests {
    static func run(_ stream: [UInt8], interval: Int, chunk: Int) -> (audio: [UInt8], titles: [String]) {
        var demuxer = ICYDemuxer(interval: interval)
        var audio: [UInt8] = []
        var titles: [String] = []
        var i = 0
        while i < stream.count {
            let end = min(stream.count, i + chunk)
            stream[i..<end].withUnsafeBytes { bytes in
                demuxer.demux(
                    bytes, audio: { audio += $0 }, metadata: { if let t = $0["StreamTitle"] { titles.append(t) } })
            }
            i = end
        }
        return (audio, titles)
    }

    @Test(arguments: [1, 7, 100, 100_000])
    func stripsMetadataOverAnyChunking(_ chunk: Int) {
        let audio = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let stream = icyStream(audio, interval: 1000, title: "Band – Song")
        let result = Self.run(stream, interval: 1000, chunk: chunk)
        #expect(result.audio == audio)
        #expect(result.titles == ["Band – Song"])
    }

    @Test func decodesWindows1252WhenNotUTF8() {
        // "Beyoncé – Déjà Vu" in Windows-1252: é = E9, – = 96, à = E0.
        var raw = Array("StreamTitle='Beyonc".utf8) + [0xE9, 0x20, 0x96, 0x20, 0x44, 0xE9, 0x6A, 0xE0]
        raw += Array(" Vu';".utf8)
        #expect(ICYDemuxer.parse(raw)["StreamTitle"] == "Beyoncé – Déjà Vu")
        #expect(ICYDemuxer.parse(Array("StreamTitle='Déjà';".utf8))["StreamTitle"] == "Déjà")
    }

    @Test func titlesMayContainQuotesAndSemicolons() {
        let fields = ICYDemuxer.parse(Array("StreamTitle='Guns N' Roses; live';StreamUrl='http://x/';\0\0\0".utf8))
        #expect(fields["StreamTitle"] == "Guns N' Roses; live")
        #expect(fields["StreamUrl"] == "http://x/")
        #expect(ICYDemuxer.parse(Array("StreamTitle='';".utf8))["StreamTitle"] == "")
        #expect(ICYDemuxer.parse([0, 0, 0]).isEmpty)
    }

    /// Every byte is audio, metadata text or a length byte, in any chunking (ICYFuzz checks this on random input).
    @Test(arguments: [1, 3, 1000])
    func audioMetadataAndLengthBytesAddUp(_ chunk: Int) {
        let audio = [UInt8](repeating: 0xAA, count: 2500)
        let stream = icyStream(audio, interval: 1000, title: "A\n<0>\u{1B}[31mB")
        var demuxer = ICYDemuxer(interval: 1000)
        var audioBytes = 0
        var titles: [String] = []
        var i = 0
        while i < stream.count {
            let end = min(stream.count, i + chunk)
            stream[i..<end].withUnsafeBytes { bytes in
                demuxer.demux(
                    bytes, audio: { audioBytes += $0.count },
                    metadata: { if let t = $0["StreamTitle"] { titles.append(t) } })
            }
            i = end
        }
        #expect(audioBytes == audio.count)
        #expect(audioBytes + demuxer.metadataBytes + demuxer.lengthBytes == stream.count)
        #expect(demuxer.lengthBytes == 2)
        #expect(titles.map { Sanitized.text($0, limit: Sanitized.titleLimit) } == ["A<0>[31mB"])
    }
}
