import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Push URLs: what they parse to, the defaults, escapes, and every refusal in words, never quoting the password.
@Suite struct IcecastTargetTests {
    @Test(
        arguments: [
            (
                "icecast://source:hackme@icecast.example:8000/live.opus", "source", "hackme", "icecast.example", 8000,
                "/live.opus"
            ),
            ("ICECAST://dj:pw@10.0.0.2/a/b.ogg", "dj", "pw", "10.0.0.2", 8000, "/a/b.ogg"),
            ("icecast://:pw@host:9000/m", "source", "pw", "host", 9000, "/m"),
            ("icecast://source:p%40ss%3Aw%2Fo%25rd@[::1]:8001/x.opus", "source", "p@ss:w/o%rd", "::1", 8001, "/x.opus"),
            ("icecast://source:a@b@host/m", "source", "a@b", "host", 8000, "/m"),
        ] as [(String, String, String, String, Int, String)])
    func parses(text: String, user: String, password: String, host: String, port: Int, mount: String) throws {
        let target = try IcecastTarget(parsing: text)
        #expect(target == IcecastTarget(user: user, password: password, host: host, port: port, mount: mount))
        #expect(!target.description.contains(password))
    }

    @Test func theDescriptionAndTheHTTPURLCarryNoPassword() throws {
        let target = try IcecastTarget(parsing: "icecast://source:s3cret@[2001:db8::1]:8000/live.opus")
        #expect(target.description == "icecast://***@[2001:db8::1]:8000/live.opus")
        #expect(target.httpURL == "http://[2001:db8::1]:8000/live.opus")
    }

    static let form = "icecast://source:PASSWORD@HOST:PORT/MOUNT"

    @Test(
        arguments: [
            ("http://source:pw@host/m", "not an icecast:// URL: write \(form)"),
            ("icecast://host:8000/m", "the URL has no source password: write \(form)"),
            ("icecast://source@host/m", "the URL has a user but no password: write \(form)"),
            ("icecast://source:@host/m", "the source password is empty: write \(form)"),
            ("icecast://source:p%4@host/m", "the user or password has a bad %XX escape: write % as %25"),
            ("icecast://source:pw@:8000/m", "the URL has no host name: write \(form)"),
            ("icecast://source:pw@host:0/m", "the port 0 is not 1 to 65535"),
            ("icecast://source:pw@host:http/m", "the port http is not 1 to 65535"),
            ("icecast://source:pw@ho_st/m", "the host name ho_st has a character a host name cannot have"),
            ("icecast://source:pw@[::1/m", "an IPv6 host needs its closing ]"),
            ("icecast://source:pw@[example]/m", "[example] is not an IPv6 address"),
            ("icecast://source:pw@[::1]x/m", "after [IPv6] comes :PORT or the mount: write \(form)"),
            ("icecast://source:pw@host", "the URL has no mount: add one, as in \(form)"),
            ("icecast://source:pw@host/", "the URL has no mount: add one, as in \(form)"),
            (
                "icecast://source:pw@host/a/../b",
                "the mount must be 1 to 255 of A-Z a-z 0-9 . _ - ~ / after the slash, without .."
            ),
            ("icecast://source:pw@host/m?x=1", "a push URL takes no query or fragment (? or #): write \(form)"),
            (
                "icecast://source:p w@host/m",
                "the URL contains a space, control or non-ASCII character (U+20): escape it as %XX"
            ),
            (
                "icecast://source:pé@host/m",
                "the URL contains a space, control or non-ASCII character (U+E9): escape it as %XX"
            ),
        ])
    func refuses(text: String, message: String) {
        #expect(throws: IcecastTarget.Problem(message)) { try IcecastTarget(parsing: text) }
    }

    @Test func twoPushesToOneMountAreRefused() throws {
        var station = StationConfiguration()
        station.upstream = "/a.mp3"
        station.pushes = [
            try IcecastTarget(parsing: "icecast://source:a@Icecast.example/live.opus"),
            try IcecastTarget(parsing: "icecast://source:b@icecast.example:8000/live.opus"),
        ]
        #expect(
            throws: ConfigurationError(
                "station main: pushes twice to icecast://***@icecast.example:8000/live.opus: Icecast takes one "
                    + "source per mount")
        ) { try station.validate() }
        station.pushes[1].mount = "/other.opus"
        try station.validate()
    }
}
