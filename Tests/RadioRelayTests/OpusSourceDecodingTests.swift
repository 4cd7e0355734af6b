import Foundation
import RadioRelayMedia
import RadioRelayTestSupport
import Testing

/// A live source's Ogg Opus, made by ffmpeg (libopus), decoded by the Opus stage into the common format: the tone
/// at its frequency and level at either common rate, its OpusTags as the title, a chained stream's next link with
/// its own title, in any chunking; and what is neither MP3 nor Ogg Opus refused with its name.
@Suite(.enabled(if: tool("ffmpeg") != nil, "needs ffmpeg (.ci/deps --test)"))
struct OpusSourceDecodingTests {
    /// `seconds` of `frequency` Hz (each channel a sine of amplitude 0.5) as Ogg Opus with ARTIST and TITLE comments.
    static func oggOpus(frequency: Int, seconds: Double, artist: String, title: String, channels: Int = 2) throws
        -> [UInt8]
    {
        let path = temporaryPath("source.opus")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try run(
            try #require(tool("ffmpeg")),
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                "aevalsrc="
                    + Array(repeating: "0.5*sin(2*PI*\(frequency)*t)", count: channels).joined(separator: "|")
                    + ":s=48000:d=\(seconds)",
                "-c:a", "libopus", "-b:a", "128k", "-metadata", "artist=\(artist)", "-metadata", "title=\(title)",
                "-f", "ogg", "-y", path,
            ])
        try #require(result.status == 0, "\(result.stderr)")
        return Array(try #require(FileManager.default.contents(atPath: path)))
    }

    struct Decoded {
        var formats: [DataFormat] = []
        var titles: [String] = []
        var left: [Float] = []
        var right: [Float] = []
    }

    static func decode(_ bytes: [UInt8], commonRate: Int, chunk: Int) throws -> Decoded {
        var configuration = InputDecoder.Configuration()
        configuration.commonRate = commonRate
        configuration.recognisesFormat = true
        let decoder = InputDecoder(configuration)
        decoder.restart(metaInterval: nil)
        var decoded = Decoded()
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            try bytes[offset..<end].withUnsafeBytes { piece in
                try decoder.feed(piece) { output in
                    switch output {
                    case .format(let format): decoded.formats.append(format)
                    case .metadata(let fields): decoded.titles += fields["StreamTitle"].map { [$0] } ?? []
                    case .frame: Issue.record("an Opus source has no MP3 frames")
                    case .pcm(let pcm):
                        #expect(pcm.sampleRate == commonRate)
                        decoded.left += pcm.left
                        decoded.right += pcm.right
                    }
                }
            }
            offset = end
        }
        #expect(decoder.codec == .opus)
        return decoded
    }

    @Test(arguments: [48_000, 44_100], [1, 700, 65_536])
    func theToneAndTitleOfAnOpusSource(commonRate: Int, chunk: Int) throws {
        let bytes = try Self.oggOpus(frequency: 1000, seconds: 2, artist: "DJ", title: "Opening")
        let decoded = try Self.decode(bytes, commonRate: commonRate, chunk: chunk)
        #expect(decoded.formats.map(\.codec) == [.opus] && decoded.formats.first?.channels == 2)
        #expect(decoded.titles == ["DJ - Opening"])
        // Two seconds, the pre-skip dropped (within a packet of it).
        let seconds = Double(decoded.left.count) / Double(commonRate)
        #expect(abs(seconds - 2) < 0.03, "\(seconds) s")
        // One second: a whole number of cycles, so the measure has no leakage.
        let middle = decoded.left.count / 4..<decoded.left.count / 4 + commonRate
        let amplitude = toneAmplitude(decoded.left, frequency: 1000, rate: commonRate, range: middle)
        let other = toneAmplitude(decoded.left, frequency: 1500, rate: commonRate, range: middle)
        #expect(abs(amplitude - 0.5) < 0.05 && other < 0.01, "1 kHz at \(amplitude), 1.5 kHz at \(other)")
        #expect(abs(toneAmplitude(decoded.right, frequency: 1000, rate: commonRate, range: middle) - 0.5) < 0.05)
    }

    /// A source client's next track is a new link (a chained Ogg stream): a new title, a new format event, the
    /// audio going on; a mono link decodes to both channels.
    @Test func aChainedStreamsLinksEachGiveTheirTitle() throws {
        let first = try Self.oggOpus(frequency: 600, seconds: 1, artist: "A", title: "One")
        let second = try Self.oggOpus(frequency: 900, seconds: 1, artist: "B", title: "Two", channels: 1)
        let decoded = try Self.decode(first + second, commonRate: 48_000, chunk: 4096)
        #expect(decoded.titles == ["A - One", "B - Two"])
        #expect(decoded.formats.map(\.channels) == [2, 1])
        let total = decoded.left.count
        #expect(abs(Double(total) / 48_000 - 2) < 0.05)
        let late = total * 3 / 4..<total * 7 / 8
        #expect(toneAmplitude(decoded.left, frequency: 900, rate: 48_000, range: late) > 0.4)
        #expect(toneAmplitude(decoded.right, frequency: 900, rate: 48_000, range: late) > 0.4)
    }

    /// A damaged page (its CRC fails) and garbage between pages cost that page's packets, never a trap; the
    /// decoder finds the next page and goes on.
    @Test func damagedPagesAreSkipped() throws {
        let clean = try Self.oggOpus(frequency: 1000, seconds: 4, artist: "DJ", title: "Opening")
        var bytes = clean
        bytes[bytes.count / 2] ^= 0x55
        var random = SplitMix64(seed: 3)
        bytes.insert(
            contentsOf: (0..<5000).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: bytes.count * 3 / 4)
        let whole = try Self.decode(clean, commonRate: 48_000, chunk: 512).left.count
        let decoded = try Self.decode(bytes, commonRate: 48_000, chunk: 512).left.count
        #expect(decoded < whole && decoded > whole / 3, "\(decoded) of \(whole) samples")
    }

    @Test func whatIsNotMP3OrOggOpusIsRefusedByName() throws {
        let path = temporaryPath("source.ogg")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let made = try run(
            try #require(tool("ffmpeg")),
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "flac", "-f",
                "ogg", "-y", path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        let bytes = Array(try #require(FileManager.default.contents(atPath: path)))
        #expect(throws: UnsupportedFormat.self) { try Self.decode(bytes, commonRate: 48_000, chunk: 4096) }
    }
}
