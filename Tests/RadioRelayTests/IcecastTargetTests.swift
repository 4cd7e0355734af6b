import CCurl
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
            // The same over TLS, with the same defaults (port 8000: Icecast has no TLS port of its own).
            (
                "icecasts://source:hackme@ice.example:8443/live.opus", "source", "hackme", "ice.example", 8443,
                "/live.opus"
            ),
            ("ICECASTS://dj:pw@10.0.0.2/a/b.ogg", "dj", "pw", "10.0.0.2", 8000, "/a/b.ogg"),
            ("icecasts://:p%40w@[::1]:443/m", "source", "p@w", "::1", 443, "/m"),
        ] as [(String, String, String, String, Int, String)])
    func parses(text: String, user: String, password: String, host: String, port: Int, mount: String) throws {
        let target = try IcecastTarget(parsing: text)
        let tls = text.lowercased().hasPrefix("icecasts:")
        #expect(
            target == IcecastTarget(user: user, password: password, host: host, port: port, mount: mount, tls: tls))
        #expect(target.httpScheme == (tls ? "https" : "http") && target.httpURL.hasPrefix(target.httpScheme + "://"))
        #expect(target.description.hasPrefix(tls ? "icecasts://***@" : "icecast://***@"))
        #expect(!target.description.contains(password))
    }

    @Test func theTLSDescriptionAndURLCarryNoPassword() throws {
        let target = try IcecastTarget(parsing: "icecasts://source:s3cret@[2001:db8::1]:8443/live.opus")
        #expect(target.description == "icecasts://***@[2001:db8::1]:8443/live.opus")
        #expect(target.httpURL == "https://[2001:db8::1]:8443/live.opus")
        #expect(Redaction.text("icecasts://source:s3cret@host/m") == "icecasts://***@host/m")
    }

    @Test func theDescriptionAndTheHTTPURLCarryNoPassword() throws {
        let target = try IcecastTarget(parsing: "icecast://source:s3cret@[2001:db8::1]:8000/live.opus")
        #expect(target.description == "icecast://***@[2001:db8::1]:8000/live.opus")
        #expect(target.httpURL == "http://[2001:db8::1]:8000/live.opus")
    }

    static let form = "icecast://source:PASSWORD@HOST:PORT/MOUNT"
    static let tlsForm = "icecasts://source:PASSWORD@HOST:PORT/MOUNT"

    @Test(
        arguments: [
            ("http://source:pw@host/m", "not an icecast:// or icecasts:// (TLS) URL: write \(form)"),
            ("https://source:pw@host/m", "not an icecast:// or icecasts:// (TLS) URL: write \(form)"),
            ("icecastss://source:pw@host/m", "not an icecast:// or icecasts:// (TLS) URL: write \(form)"),
            ("icecasts://host:8000/m", "the URL has no source password: write \(tlsForm)"),
            ("icecasts://source:pw@host", "the URL has no mount: add one, as in \(tlsForm)"),
            ("icecasts://source:pw@host:99999/m", "the port 99999 is not 1 to 65535"),
            ("icecasts://source:pw@host/m#x", "a push URL takes no query or fragment (? or #): write \(tlsForm)"),
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

    /// A mount is a mount with or without TLS: a plain and a TLS push to it are two sources for one mount too.
    @Test(arguments: ["icecast", "icecasts"]) func twoPushesToOneMountAreRefused(scheme: String) throws {
        var station = StationConfiguration()
        station.upstream = "/a.mp3"
        station.pushes = [
            try IcecastTarget(parsing: "icecast://source:a@Icecast.example/live.opus"),
            try IcecastTarget(parsing: "\(scheme)://source:b@icecast.example:8000/live.opus"),
        ]
        #expect(
            throws: ConfigurationError(
                "station main: pushes twice to \(scheme)://***@icecast.example:8000/live.opus: Icecast takes one "
                    + "source per mount")
        ) { try station.validate() }
        station.pushes[1].mount = "/other.opus"
        try station.validate()
    }
}

/// The words of a failed `icecasts://` connection: libcurl's reason, then what to check, never the password.
@Suite struct PushTLSFailureTests {
    static let target = IcecastTarget(password: "s3cret", host: "ice.example", port: 8443, mount: "/m", tls: true)

    @Test func eachTLSFailureSaysWhatToCheck() throws {
        let verification = try #require(
            PushFailure.tls(
                CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: unable to get local issuer certificate",
                target: Self.target))
        #expect(verification.kind == .tls)
        #expect(
            verification.message
                == "the server's TLS certificate was not accepted: SSL certificate problem: unable to get local "
                + "issuer certificate (it must be signed by a CA in push_ca, or in the system's store without "
                + "push_ca, and name ice.example)")
        let handshake = PushFailure.tls(CURLE_SSL_CONNECT_ERROR, "wrong version number", target: Self.target)
        #expect(
            handshake?.message == "the TLS handshake failed: wrong version number (does ice.example:8443 speak TLS?)")
        let stalled = PushFailure.tls(CURLE_OPERATION_TIMEDOUT, "SSL connection timeout", target: Self.target)
        #expect(
            stalled?.message
                == "the TLS handshake timed out: SSL connection timeout (does ice.example:8443 speak TLS? Icecast's "
                + "plain port takes icecast://)")
        let file = PushFailure.tls(
            CURLE_SSL_CACERT_BADFILE, "error setting certificate file: /x.pem", target: Self.target)
        #expect(
            file?.message
                == "the CA certificates cannot be loaded: error setting certificate file: /x.pem (check push_ca)")
        // Not TLS's: left to the plain rules.
        #expect(
            PushFailure.tls(CURLE_OPERATION_TIMEDOUT, "Connection timed out after 10001 ms", target: Self.target) == nil
        )
        #expect(PushFailure.tls(CURLE_COULDNT_CONNECT, "Connection refused", target: Self.target) == nil)
        // A URL in libcurl's words is shown without its credentials.
        let quoted = PushFailure.tls(
            CURLE_SSL_CONNECT_ERROR, "for https://source:s3cret@ice.example:8443/m", target: Self.target)
        #expect(quoted?.message.contains("s3cret") == false)
    }
}
