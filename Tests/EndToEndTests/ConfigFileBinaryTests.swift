import Foundation
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane (light: the binary alone), which keeps the two lanes about as long as each other.
extension ServerProcessTests {
    /// The real binary with config files.
    @Suite(.timeLimit(.minutes(1))) struct ConfigFileBinaryTests {
        static func write(_ text: String) throws -> String {
            let path = temporaryPath("radio-relay.conf")
            try text.write(toFile: path, atomically: false, encoding: .utf8)
            return path
        }

        @Test func checkConfigExitStatuses() throws {
            let executable = try #require(radioRelayExecutable())
            let good = try Self.write(
                "[server]\nstatus = off\n[station a]\nupstream = /a.mp3\n[station b]\nupstream = /b.mp3\nport = 8001\n")
            defer { try? FileManager.default.removeItem(atPath: good) }
            let ok = try run(executable, ["check-config", good])
            #expect(ok.status == 0 && ok.stderr.isEmpty)
            // Valid, with what would fail later said: neither file exists.
            let unreadable = { (station: String, path: String) in
                "warning: station \(station): upstream \(path) cannot be read (No such file or directory): it fails "
                    + "when the station needs it\n"
            }
            #expect(
                ok.stdout == "\(good): OK, 2 stations (a, b)\n" + unreadable("a", "/a.mp3") + unreadable("b", "/b.mp3"))

            let bad = try Self.write("[station a]\nport = 0\n[station a]\nupstream = /b.mp3\n")
            defer { try? FileManager.default.removeItem(atPath: bad) }
            let failed = try run(executable, ["check-config", bad])
            #expect(failed.status == 78 && failed.stdout.isEmpty)
            #expect(
                failed.stderr == """
                    \(bad):1: [station a] has no upstream: add upstream = an http(s) URL, a file: URL or a path
                    \(bad):2: port = 0: use 1 to 65535, or none
                    \(bad):3: duplicate station a (the first is at line 1): rename one

                    """)

            let missing = try run(executable, ["check-config", "/nonexistent.conf"])
            #expect(missing.status == 78)
            #expect(missing.stderr == "/nonexistent.conf: cannot read: No such file or directory\n")

            let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("config/radio-relay.conf").path
            let shipped = try run(executable, ["check-config", example])
            #expect(shipped.status == 0, "\(shipped.stderr)")
            #expect(shipped.stdout.hasPrefix("\(example): OK, 2 stations"))
        }

        /// `--config` with a broken file exits 78 with every problem logged, before binding anything.
        @Test func serveWithABrokenConfigExits78() throws {
            let executable = try #require(radioRelayExecutable())
            let bad = try Self.write("[station a]\nupstream = /a.mp3\nbitrate = 5k\nvolume = 11\n")
            defer { try? FileManager.default.removeItem(atPath: bad) }
            for arguments in [["--config", bad], ["serve", "--config", bad]] {
                let result = try run(executable, arguments)
                #expect(result.status == 78)
                #expect(result.stderr.contains("\(bad):3: bitrate = 5k: use 6k to 510k, e.g. 96k or 96000"))
                #expect(result.stderr.contains("\(bad):4: unknown key volume in [station a]"))
            }
        }

        /// Two stations from one file, in one process: each port serves its own Ogg stream.
        @Test func serveRunsEveryStationOfTheFile() throws {
            let executable = try #require(radioRelayExecutable())
            let ports = [try freeTCPPort(), try freeTCPPort()]
            let sample = Fixture.path("stereo-22k.mp3")
            let config = try Self.write(
                """
                [server]
                status = off
                [station one]
                upstream = \(sample)
                bind = 127.0.0.1
                port = \(ports[0])
                [station two]
                upstream = \(sample)
                bind = 127.0.0.1
                port = \(ports[1])
                page_ms = 20
                """)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["--config", config]
            process.standardError = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            defer {
                if process.isRunning { process.terminate() }
                process.waitUntilExit()
            }
            for port in ports {
                var bytes: [UInt8] = []
                for _ in 0..<50 where bytes.isEmpty {
                    if let client = try? ListenerClient(port: UInt16(port)) {
                        bytes = client.read(for: 1.0, limit: 4096).bytes
                        client.close()
                    } else {
                        usleep(100_000)
                    }
                }
                #expect(bytes.starts(with: Array("OggS".utf8)), "port \(port): \(bytes.count) bytes")
            }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }

        /// A port nothing listens on now.
        func freeTCPPort() throws -> Int {
            Int(try freePort())
        }
    }
}
