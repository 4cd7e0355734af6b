import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Config files wrong about where a station's outputs go: two stations on one port, a station on the status address,
/// the MP3 pass-through, pushes and `push_ca`, the HTTP address and mounts. Each message exact, with its file and line.
@Suite struct ConfigFileOutputErrorTests {
    static let station = ConfigFileErrorTests.station

    static func messages(_ text: String, credentials: String? = nil) -> [String] {
        ConfigFileErrorTests.messages(text, credentials: credentials)
    }

    @Test(
        arguments: [
            ("", "0.0.0.0", 8000, "station b on 0.0.0.0:8000 overlaps station a on 0.0.0.0:8000 (line 3)"),
            (
                "bind = 127.0.0.1", "0.0.0.0", 8000,
                "station b on 0.0.0.0:8000 overlaps station a on 127.0.0.1:8000 (line 3)"
            ),
            ("bind = 127.0.0.1", "::", 8000, "station b on [::]:8000 overlaps station a on 127.0.0.1:8000 (line 3)"),
            ("bind = ::1", "0:0::1", 8000, "station b on [0:0::1]:8000 overlaps station a on [::1]:8000 (line 3)"),
            ("bind = 127.0.0.1", "127.0.0.2", 8000, nil),
            ("", "0.0.0.0", 8001, nil),
        ] as [(String, String, Int, String?)])
    func twoStationsOnOnePort(firstBind: String, secondBind: String, secondPort: Int, overlap: String?) {
        let text =
            "[station a]\nupstream = /a.mp3\nport = 8000\n\(firstBind)\n"
            + "[station b]\nupstream = /b.mp3\nbind = \(secondBind)\nport = \(secondPort)\n"
        let expected = overlap.map { ["r.conf:8: \($0): give each station its own port"] } ?? []
        #expect(Self.messages(text) == expected)
    }

    @Test func aStationOnTheStatusAddress() {
        #expect(
            Self.messages("[station a]\nupstream = /a.mp3\nport = 8080\n") == [
                "r.conf:3: station a on 0.0.0.0:8080 overlaps the status address 127.0.0.1:8080 (the default: set "
                    + "status in [server])"
            ])
        #expect(
            Self.messages("[server]\nstatus = [::]:9000\n[station a]\nupstream = /a.mp3\nbind = ::1\nport = 9000\n")
                == [
                    "r.conf:6: station a on [::1]:9000 overlaps the status address [::]:9000 ([server] status, line 2)"
                ])
        #expect(Self.messages("[server]\nstatus = off\n[station a]\nupstream = /a.mp3\nport = 8080\n").isEmpty)
        #expect(
            Self.messages("[server]\nstatus = 127.0.0.1:8081\n[station a]\nupstream = /a.mp3\nport = 8080\n").isEmpty)
    }

    /// A bad push is reported at its line with the password hidden (the file's text for a credential), a second
    /// push to one mount at the second line; any other key given twice is still an error.
    @Test func mp3PassThrough() {
        #expect(
            Self.messages("[station a]\nupstream = http://x/a.opus\nmp3 = yes\n") == [
                "r.conf:1: station a: mp3 = yes passes an MP3 upstream's frames through; this upstream is Ogg Opus: "
                    + "set mp3 = no (its Opus mounts serve it)"
            ])
        #expect(
            Self.messages(Self.station + "mp3 = yes\nmount = a.mp3\n") == [
                "r.conf:1: station a: mount a.mp3 is the MP3 pass-through output's: choose another"
            ])
        #expect(
            Self.messages(Self.station + "port = 9000\nmp3 = yes\nmp3_port = 9000\n") == [
                "r.conf:1: station a: mp3_port 9000 is the station's own port: give it another"
            ])
        // Another station's mount, and another station's port.
        #expect(
            Self.messages(
                Self.station
                    + "mp3 = yes\nmp3_port = 9100\n[station b]\nupstream = /b.mp3\nport = 9100\nmount = a.mp3\n")
                == [
                    "r.conf:7: station b on 0.0.0.0:9100 overlaps the MP3 output of station a on 0.0.0.0:9100 (line 4): "
                        + "give each output its own port",
                    "r.conf:8: station b: mount a.mp3 is also the MP3 output of station a's (line 3): give each output "
                        + "its own mount",
                ])
        #expect(
            Self.messages(Self.station + "mp3 = yes\nmount = a.mp3.opus\n") == [
                "r.conf:1: station a: the MP3 output a.mp3 has its events at /a.mp3/, as the mount a.mp3.opus does: "
                    + "give the station another mount"
            ])
        #expect(
            Self.messages(Self.station + "mp3_port = 9100\n") == [
                "r.conf:1: station a: mp3_port 9100 without mp3 = yes: set mp3 = yes, or remove mp3_port"
            ])
        #expect(Self.messages(Self.station + "mp3 = yes\n").isEmpty)
    }

    @Test func pushes() throws {
        let directory = try ConfigFileTests.credentials(["bad-push": "icecast://source:secret@host\n"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let noMount = "the URL has no mount: add one, as in icecast://source:PASSWORD@HOST:PORT/MOUNT"
        let text = """
            [station a]
            upstream = /a.mp3
            push = icecast://source:secret@host
            push = @credential:bad-push
            push = icecast://source:s1@h/a.opus
            push = icecast://dj:s2@H:8000/a.opus
            push = icecast://source:s3@h/b.opus
            push =
            upstream = /b.mp3
            """
        let messages = Self.messages(text, credentials: directory)
        #expect(
            messages == [
                "r.conf:3: push = icecast://***@host: \(noMount)",
                "r.conf:4: push = @credential:bad-push: \(noMount)",
                "r.conf:6: push to icecast://***@H:8000/a.opus again (the first is at line 5): Icecast takes one "
                    + "source per mount",
                "r.conf:8: push needs a value: icecast://source:PASSWORD@HOST:PORT/MOUNT",
            ])
        #expect(!messages.joined().contains("secret") && !messages.joined().contains("s2"))
    }

    /// `push_ca` must name a file that can be read and holds a PEM certificate: checked when the file is read, each
    /// refusal at its line with what to give instead.
    @Test func pushCA() throws {
        let directory = try ConfigFileTests.credentials([
            "not-pem.txt": "just words\n", "empty.pem": "",
            "ca.pem": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let use = "use a readable PEM file of CA certificates"
        func messages(_ value: String) -> [String] {
            Self.messages("[station a]\nupstream = /a.mp3\npush_ca = \(value)\n")
        }
        #expect(
            messages(directory + "/missing.pem") == [
                "r.conf:3: push_ca = \(directory)/missing.pem: cannot be read (No such file or directory): \(use)"
            ])
        #expect(messages(directory) == ["r.conf:3: push_ca = \(directory): cannot be read (Is a directory): \(use)"])
        for name in ["not-pem.txt", "empty.pem"] {
            #expect(
                messages("\(directory)/\(name)") == [
                    "r.conf:3: push_ca = \(directory)/\(name): holds no PEM certificate (-----BEGIN CERTIFICATE-----): "
                        + use
                ])
        }
        #expect(messages("") == ["r.conf:3: push_ca needs a value: a readable PEM file of CA certificates"])
        #expect(messages("\(directory)/ca.pem").isEmpty)
        #expect(
            Self.messages("[station a]\nupstream = /a.mp3\npush_ca = \(directory)/ca.pem\npush_ca = /b.pem\n") == [
                "r.conf:4: duplicate key push_ca (the first is at line 3): keep one"
            ])
        // Not a secret: it cannot come from a credential.
        #expect(
            Self.messages("[station a]\nupstream = /a.mp3\npush_ca = @credential:ca\n", credentials: directory) == [
                "r.conf:3: push_ca cannot come from a credential: only upstream, source_password, listener_add, listener_remove or push can"
            ])
    }

    /// `[server] http`: its value, its overlaps with stations and the status address, and mounts two stations share.
    @Test func theHTTPAddressAndMounts() throws {
        let good = try ServerConfiguration.parse(
            "[server]\nhttp = 8001\n[station a]\nupstream = /a.mp3\nmount = /live.opus\ndisplay_name = A FM\n",
            file: "r.conf", credentialsDirectory: nil)
        #expect(good.server.http == ListenAddress(host: "0.0.0.0", port: 8001))
        #expect(good.stations[0].mountPath == "/live.opus" && good.stations[0].info.displayName == "A FM")
        #expect(
            try ServerConfiguration.parse(
                "[server]\nhttp = off\n[station a]\nupstream = /a.mp3\n", file: "r.conf", credentialsDirectory: nil
            ).server.http == nil)
        #expect(
            Self.messages("[server]\nhttp = [::]:8000\n[station a]\nupstream = /a.mp3\n") == [
                "r.conf:2: http = [::]:8000 overlaps station a on 0.0.0.0:8000 (line 3): give HTTP its own port"
            ])
        #expect(
            Self.messages("[server]\nhttp = 127.0.0.1:8080\n[station a]\nupstream = /a.mp3\nport = 8001\n") == [
                "r.conf:2: http = 127.0.0.1:8080 overlaps the status address 127.0.0.1:8080 (the default)"
            ])
        #expect(
            Self.messages("[server]\nhttp = x\n[station a]\nupstream = /a.mp3\n") == [
                "r.conf:2: http = x: use PORT, ADDR:PORT such as 0.0.0.0:8001 or [::]:8001, or off"
            ])
        #expect(
            Self.messages(
                "[station a]\nupstream = /a.mp3\nmount = b.opus\n[station b]\nupstream = /b.mp3\nport = 8001\n") == [
                    "r.conf:4: station b: mount b.opus is also station a's (line 3): give each output its own mount"
                ])
        // `/b` and `/b.opus` would share `/b/` for events and HLS.
        #expect(
            Self.messages(
                "[station a]\nupstream = /a.mp3\nmount = b\n[station b]\nupstream = /b.mp3\nport = 8001\n") == [
                    "r.conf:4: station b: mount b.opus has its events and HLS at /b/, as station a's mount does (line "
                        + "3): give each output its own name (a final .opus is dropped there)"
                ])
        #expect(
            Self.messages("[station a]\nupstream = /a.mp3\ngenre = \"\u{1B}[31m\"\nmount = a/b\n") == [
                "r.conf:3: genre = \u{1B}[31m: use one line of 1 to 256 printable characters",
                "r.conf:4: mount = a/b: use 1 to 128 of A-Z a-z 0-9 _ - . not starting with a dot",
            ])
    }
}
