import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane (light: the binary alone), which keeps the two lanes about as long as each other.
extension ServerProcessTests {
    /// The real binary: what a shell or systemd sees.
    @Suite(.timeLimit(.minutes(1))) struct CommandLineBinaryTests {
        /// A good transcode writes the file and one summary line; each failure prints one line and its sysexits status:
        /// 64 usage (with the hint), 66 input missing, 73 output cannot be created.
        @Test func exitStatuses() throws {
            let executable = try #require(radioRelayExecutable())
            let output = temporaryPath("cli.opus")
            defer { try? FileManager.default.removeItem(atPath: output) }
            let good = try run(
                executable,
                [
                    "transcode", Fixture.path("stereo-22k.mp3"), output, "--bitrate", "64k",
                    "--page-ms=40", "--complexity", "5", "--rate", "44100",
                ])
            #expect(good.status == 0, "\(good.stderr)")
            #expect(good.stderr.contains("2.000 s of Opus"))
            #expect(FileManager.default.fileExists(atPath: output))

            let usage = try run(executable, ["transcode", "a", "b", "--page-ms", "30"])
            #expect(usage.status == 64)
            #expect(
                usage.stderr == "radio-relay: --page-ms 30: use a multiple of 20 from 20 to 1000\n"
                    + "try `radio-relay transcode --help`\n")

            let missing = try run(executable, ["transcode", "/nonexistent.mp3", temporaryPath("x.opus")])
            #expect(missing.status == 66)
            #expect(missing.stderr.split(separator: "\n").count == 1)
            #expect(missing.stderr.contains("/nonexistent.mp3"))

            let uncreatable = try run(
                executable,
                [
                    "transcode", Fixture.path("stereo-22k.mp3"),
                    "/nonexistent-\(UUID().uuidString)/x.opus",
                ])
            #expect(uncreatable.status == 73)
            #expect(uncreatable.stderr.split(separator: "\n").count == 1)
            #expect(uncreatable.stderr.contains("cannot create"))

            let help = try run(executable, ["serve", "--help"])
            #expect(help.status == 0 && help.stdout.hasPrefix("usage: radio-relay serve"))
        }
    }
}
