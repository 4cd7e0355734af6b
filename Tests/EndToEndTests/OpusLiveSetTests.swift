import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

extension PeerTests {
    /// Ogg Opus DJs stay on the air (an input is judged by decoded audio of any codec; an Opus source was once cut
    /// by an MPEG-frame count at 10 s): ffmpeg sends Ogg Opus to a relayed station and to a live-only one for 45 s
    /// each, four times the no-audio rule, while a decoding listener of each hears the source's tone all along.
    @Suite(.timeLimit(.minutes(2)), .enabled(if: tool("ffmpeg") != nil, "needs ffmpeg (.ci/deps --test)"))
    struct OpusLiveSetTests {
        static let seconds = 45

        @Test func opusSourcesPlayPastTheNoAudioRule() throws {
            let relay = try taggedToneFile(440, seconds: 120, artist: "Relay", title: "Programme")
            defer { try? FileManager.default.removeItem(atPath: relay) }
            let (http, status, mainPort, studioPort) = (try freePort(), try freePort(), try freePort(), try freePort())
            let config = temporaryPath("opus-set.conf")
            try """
            [server]
            http = 127.0.0.1:\(http)
            status = 127.0.0.1:\(status)

            [station main]
            bind = 127.0.0.1
            port = \(mainPort)
            upstream = \(relay)
            source_password = main-dj-pass

            [station studio]
            bind = 127.0.0.1
            port = \(studioPort)
            source_password = studio-dj-pass
            """.write(toFile: config, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let server = try ServerProcessTests.ServerProcess(arguments: ["serve", "--config", config])
            defer { server.stop() }
            func playing(_ name: String) -> String? {
                (try? statusStations(status))?.first { $0.name == name }?.playingInput
            }
            let mainListener = try ServerProcessTests.FailoverTests.DecodingListener(port: mainPort)
            defer { mainListener.stop() }
            let studioListener = try ServerProcessTests.FailoverTests.DecodingListener(port: studioPort)
            defer { studioListener.stop() }
            try #require(waitUntil(10) { playing("main") == "1" && mainListener.seconds > 1 }, "\(server.log)")

            let mainDJ = try SourceClient.ffmpeg(
                port: http, password: "main-dj-pass", mount: "/main.opus", frequency: 660, seconds: Self.seconds,
                opus: true)
            defer { mainDJ.stop() }
            let studioDJ = try SourceClient.ffmpeg(
                port: http, password: "studio-dj-pass", mount: "/studio", frequency: 1000, seconds: Self.seconds,
                opus: true)
            defer { studioDJ.stop() }
            try #require(waitUntil(8) { playing("main") == "live" }, "\(server.log)")
            let mainLiveFrom = mainListener.seconds
            // Both sources end by themselves; the relayed station then hands back.
            #expect(waitUntil(Double(Self.seconds) + 15) { !mainDJ.isRunning && !studioDJ.isRunning })
            #expect(waitUntil(8) { playing("main") == "1" }, "\(server.log)")
            #expect(waitUntil(5) { mainListener.seconds > mainLiveFrom + Double(Self.seconds) + 2 })

            let main = ToneTimeline(mainListener.samples, rate: 16_000, tones: [440, 660])
            let studio = ToneTimeline(studioListener.samples, rate: 16_000, tones: [1000])
            print("relayed station, an Ogg Opus DJ for \(Self.seconds) s:\n\(main)")
            print("live-only station, an Ogg Opus DJ for \(Self.seconds) s:\n\(studio)")
            #expect(main.order() == [440, 660, 440], "\(main)")
            let dj = main.segments.filter { $0.tone == 660 }.map(\.length).max() ?? 0
            #expect(dj > Double(Self.seconds) - 3, "the DJ played \(dj) s of \(Self.seconds) in one piece")
            let studioDJPlayed = studio.segments.filter { $0.tone == 1000 }.map(\.length).max() ?? 0
            #expect(
                studioDJPlayed > Double(Self.seconds) - 3, "the studio's DJ played \(studioDJPlayed) s in one piece")
            let log = server.log
            #expect(!log.contains(" audio in 10 s"), "\(log)")
            #expect(log.components(separatedBy: "live source 127.0.0.1").count - 1 >= 2, "\(log)")
        }
    }
}
