import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

@Suite(.timeLimit(.minutes(1))) struct TranscodeTests {
    /// Seconds each fixture decodes to (ffmpeg decodes the same; it is asked live below when installed).
    static let durations: [String: Double] = [
        "stereo-44k-128k.mp3": 3.0, "mono-48k.mp3": 2.0, "stereo-22k.mp3": 2.0, "id3-xing-vbr.mp3": 2.0,
        "garbage-spliced.mp3": 114 * 1152 / 44_100.0,
        "rate-switch.mp3": 59 * 1152 / 44_100.0 + 64 * 1152 / 48_000.0,
    ]

    static func transcode(_ input: String, options: Transcoder.Options = .init()) throws
        -> (summary: Transcoder.Summary, output: String)
    {
        let output = temporaryPath("out.opus")
        let summary = try Transcoder(options: options).run(input: input, output: output)
        return (summary, output)
    }

    /// ffmpeg's own decode of an MP3, in seconds (it honours the LAME tag like we do).
    static func ffmpegDuration(_ path: String) throws -> Double {
        let ffmpeg = try #require(tool("ffmpeg"))
        let ffprobe = try #require(tool("ffprobe"))
        let raw = temporaryPath("ffmpeg.f32")
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let result = try run(ffmpeg, ["-nostdin", "-v", "quiet", "-i", path, "-f", "f32le", "-ac", "1", raw])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int)
        let probe = try run(
            ffprobe,
            [
                "-v", "error", "-select_streams", "a", "-show_entries",
                "stream=sample_rate", "-of", "default=nw=1:nk=1", path,
            ])
        let rate = try #require(
            Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)),
            "ffprobe: \(probe.stdout)\(probe.stderr)")
        return Double(size / 4) / rate
    }

    @Test(arguments: Fixture.all)
    func fixtureBecomesValidOggOpusOfTheSameLength(_ name: String) throws {
        let (summary, output) = try Self.transcode(Fixture.path(name))
        defer { try? FileManager.default.removeItem(atPath: output) }
        let decoded = try decodeOpus([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        let expected = try #require(Self.durations[name])
        #expect(abs(decoded.duration - expected) < 0.020, "\(decoded.duration) s vs \(expected) s")
        #expect(abs(summary.secondsOut - decoded.duration) < 0.001)
    }

    /// ffmpeg decodes the input (all fixtures but rate-switch.mp3) to the same length as our output. Skipped, and
    /// reported so, when ffmpeg or ffprobe is not installed.
    @Test(
        .enabled(if: tool("ffmpeg") != nil, "needs ffmpeg (Debian: ffmpeg; `.ci/deps --test`)"),
        .enabled(if: tool("ffprobe") != nil, "needs ffprobe (Debian: ffmpeg; `.ci/deps --test`)"),
        arguments: Fixture.all.filter { $0 != "rate-switch.mp3" }
    )
    func outputLengthMatchesFFmpeg(_ name: String) throws {
        let (_, output) = try Self.transcode(Fixture.path(name))
        defer { try? FileManager.default.removeItem(atPath: output) }
        let decoded = try decodeOpus([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        let probed = try Self.ffmpegDuration(Fixture.path(name))
        #expect(abs(decoded.duration - probed) < 0.020, "\(decoded.duration) s vs ffmpeg \(probed) s")
    }

    /// The reference tools find nothing wrong in the output. Skipped, and reported so, when they are not installed.
    @Test(
        .enabled(if: tool("opusinfo") != nil, "needs opusinfo (Debian: opus-tools; `.ci/deps --test`)"),
        .enabled(if: tool("oggz-validate") != nil, "needs oggz-validate (Debian: oggz-tools; `.ci/deps --test`)"),
        arguments: Fixture.all
    )
    func referenceToolsAcceptTheOutput(_ name: String) throws {
        let (_, output) = try Self.transcode(Fixture.path(name))
        defer { try? FileManager.default.removeItem(atPath: output) }
        let opusinfo = try run(try #require(tool("opusinfo")), [output])
        #expect(opusinfo.status == 0)
        let text = opusinfo.stdout + opusinfo.stderr
        #expect(!text.localizedCaseInsensitiveContains("warning"), "\(text)")
        #expect(!text.localizedCaseInsensitiveContains("error"), "\(text)")
        let validate = try run(try #require(tool("oggz-validate")), [output])
        #expect(validate.status == 0, "\(validate.stdout)\(validate.stderr)")
    }

    /// The garbage file: the two damaged frames are dropped and the Opus stream stays exact, with the tones intact.
    @Test func garbageSplicedInputGivesACleanStream() throws {
        let (summary, output) = try Self.transcode(Fixture.path("garbage-spliced.mp3"))
        defer { try? FileManager.default.removeItem(atPath: output) }
        #expect(summary.parser.syncLosses == 2)
        let decoded = try decodeOpus([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        // Before the first splice and after the second (a gap shifts the phase, so no window spans one).
        for window in [4_800..<24_000, decoded.left.count - 24_000..<decoded.left.count - 2_400] {
            #expect(abs(toneAmplitude(decoded.left, frequency: 440, rate: 48_000, range: window) - 0.475) < 0.03)
            #expect(abs(toneAmplitude(decoded.right, frequency: 1000, rate: 48_000, range: window) - 0.475) < 0.03)
        }
        let peak = decoded.left.map(abs).max() ?? 0
        #expect(peak < 0.65, "peak \(peak): a burst of noise around a splice")
    }

    @Test func settingsReachTheStream() throws {
        var options = Transcoder.Options()
        options.encoder.bitrate = 64_000
        options.encoder.pageDuration = 20
        options.commonRate = 44_100
        let (_, output) = try Self.transcode(Fixture.path("stereo-44k-128k.mp3"), options: options)
        defer { try? FileManager.default.removeItem(atPath: output) }
        let decoded = try decodeOpus([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        #expect(decoded.pages.count == 2 + 151)  // 3 s + pre-skip in 20 ms pages
        #expect(abs(decoded.duration - 3.0) < 0.001)
        let bytes = decoded.pages.dropFirst(2).reduce(0) { $0 + $1.bytes.count }
        #expect(Double(bytes * 8) / 3 < 64_000 * 1.25)
    }

    /// A real libcurl transfer from a real HTTP server on 127.0.0.1.
    @Test func transcodesFromHTTP() throws {
        let body = try Fixture.bytes("stereo-44k-128k.mp3")
        let server = try HTTPTestServer { path in
            path == "/stream.mp3"
                ? .init(headers: ["Content-Type": "audio/mpeg"], body: body)
                : .init(status: 404, body: Array("not here".utf8))
        }
        defer { server.stop() }
        let (_, output) = try Self.transcode(server.baseURL + "/stream.mp3")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let decoded = try decodeOpus([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        #expect(abs(decoded.duration - 3.0) < 0.001)

        let missing = temporaryPath("missing.opus")
        #expect {
            try Transcoder().run(input: server.baseURL + "/nothing.mp3", output: missing)
        } throws: { ($0 as? DownloadError)?.kind == .httpStatus(404) }
        #expect(!FileManager.default.fileExists(atPath: missing))
        let parent = URL(fileURLWithPath: missing).deletingLastPathComponent().path
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: parent).filter {
            $0.contains(URL(fileURLWithPath: missing).lastPathComponent)
        }
        #expect(leftovers.isEmpty)
    }

    @Test func refusedConnectionIsAClearError() throws {
        // A port nobody listens on: bind one, note it, close it.
        let server = try HTTPTestServer { _ in .init() }
        let url = server.baseURL + "/x.mp3"
        server.stop()
        let output = temporaryPath("refused.opus")
        #expect {
            try Transcoder().run(input: url, output: output)
        } throws: { error in
            guard let error = error as? DownloadError else { return false }
            return error.kind == .transfer && error.description.contains("127.0.0.1")
        }
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func nonMP3InputIsRejectedWithoutOutput() throws {
        let input = temporaryPath("text.mp3")
        try Data(String(repeating: "This is not an MP3 file at all. ", count: 2000).utf8)
            .write(to: URL(fileURLWithPath: input))
        defer { try? FileManager.default.removeItem(atPath: input) }
        let output = temporaryPath("text.opus")
        #expect(throws: TranscodeError.self) { try Transcoder().run(input: input, output: output) }
        #expect(!FileManager.default.fileExists(atPath: output))

        #expect { try Transcoder().run(input: "/nonexistent/file.mp3", output: output) } throws: {
            ($0 as? DownloadError)?.kind == .file && "\($0)".contains("No such file")
        }
        #expect { try Transcoder().run(input: "gopher://example/x.mp3", output: output) } throws: {
            ($0 as? DownloadError)?.kind == .badURL
        }
    }
}
