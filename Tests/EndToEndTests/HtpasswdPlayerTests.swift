import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane: short runs of the players (a few seconds each), light beside the other lane.
extension ServerProcessTests {
    /// A station protected by an htpasswd file made by Apache's `htpasswd` (apache2-utils): bcrypt (`-B`),
    /// SHA-256-crypt (`-2`) and SHA-512-crypt (`-5`) users play with ffmpeg and mpv, credentials in the URL; a
    /// wrong password is refused; a file with Apache's MD5, `{SHA}` or an Icecast md5 line is refused at start-up
    /// naming its line.
    @Suite(
        .enabled(
            if: tool("ffmpeg") != nil && tool("mpv") != nil && tool("htpasswd") != nil,
            "needs ffmpeg, mpv and apache2-utils (.ci/deps --test)"))
    struct HtpasswdPlayerTests {
        static func htpasswd(_ arguments: [String]) throws {
            let result = try run(try #require(tool("htpasswd")), arguments)
            try #require(result.status == 0, "htpasswd \(arguments): \(result.stderr)")
        }

        @Test func apachesHashesAdmitTheirUsersWithFFmpegAndMpv() throws {
            let file = temporaryPath("listeners.htpasswd")
            defer { unlink(file) }
            let users = [("-B", "bob", "bcrypt pw 1"), ("-2", "carol", "sha256:pw 2"), ("-5", "dave", "sha512 pw%3")]
            for (index, (format, user, password)) in users.enumerated() {
                try Self.htpasswd(["-b" + (index == 0 ? "c" : ""), format, file, user, password])
            }
            print(try String(contentsOfFile: file, encoding: .utf8))
            let station = try ServedStation(["--port", "none", "--htpasswd", file])
            defer { station.stop() }
            @Sendable func url(_ user: String, _ password: String) -> String {
                let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
                return "http://\(user):\(encoded)@127.0.0.1:\(station.http)/test.opus"
            }
            for (format, user, password) in users {
                let ffmpeg = Background { try PeerTests.HLSPlayerTests.decode(url(user, password), seconds: 3) }
                let mpv = try PeerTests.HLSPlayerTests.play(url(user, password), seconds: 3)
                let decoded = try ffmpeg.value()
                for (name, result) in [("ffmpeg", decoded), ("mpv", mpv)] {
                    #expect(
                        result.tones.seconds >= 2.5, "\(format) \(name): \(result.tones.seconds) s \(result.stderr)")
                    #expect(abs(result.tones.left440 - 0.475) < 0.05, "\(format) \(name): \(result.tones)")
                }
            }
            let wrong = try PeerTests.HLSPlayerTests.decode(url("bob", "bcrypt pw 2"), seconds: 3)
            #expect(wrong.status != 0 && wrong.stderr.contains("401") && wrong.tones.seconds == 0, "\(wrong.stderr)")
            let unknown = try PeerTests.HLSPlayerTests.decode(url("eve", "bcrypt pw 1"), seconds: 3)
            #expect(unknown.status != 0 && unknown.stderr.contains("401"), "\(unknown.stderr)")
            let snapshot = try statusSnapshot(station.status)
            // Each user's players: ffmpeg and mpv, each after its first try without credentials (a 401 with no
            // check); then the wrong password and the unknown user.
            #expect(
                snapshot.authentication.admitted == 6 && snapshot.authentication.refused == 2,
                "\(snapshot.authentication)")
        }

        /// The formats refused: each names the file, its line and what to do.
        @Test(arguments: [("-m", "Apache MD5"), ("-s", "unsalted SHA-1"), ("-d", "DES crypt"), ("md5", "Icecast")])
        func weakHashesAreRefusedAtStartUp(_ format: String, _ words: String) throws {
            let file = temporaryPath("weak.htpasswd")
            defer { unlink(file) }
            try Self.htpasswd(["-cbB", file, "bob", "fine pw"])
            if format == "md5" {
                // Icecast's own htpasswd auth writes user:md5hex.
                let line = "carol:ac8c7607255d40a357b413a7854d19c7\n"
                let handle = try #require(FileHandle(forWritingAtPath: file))
                handle.seekToEndOfFile()
                handle.write(Data(line.utf8))
                try handle.close()
            } else {
                try Self.htpasswd(["-b", format, file, "carol", "weak pw"])
            }
            let config = temporaryPath("weak.conf")
            defer { unlink(config) }
            try "[station a]\nupstream = \(Fixture.path("stereo-44k-128k.mp3"))\nhtpasswd = \(file)\n".write(
                toFile: config, atomically: true, encoding: .utf8)
            let result = try run(try #require(radioRelayExecutable()), ["check-config", config])
            #expect(result.status != 0)
            let said = result.stdout + result.stderr
            #expect(said.contains("\(file):2: ") && said.contains(words) && said.contains("htpasswd -B"), "\(said)")
        }
    }
}
