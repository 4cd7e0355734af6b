import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The one redaction of secrets in URLs (`Redaction`, `SecretURL`) and the places that must use it.
@Suite struct RedactionTests {
    @Test(
        arguments: [
            ("http://user:pass@example.org/a", "http://***@example.org/a"),
            ("HTTPS://u:p@w@host:8000/x?y=1", "HTTPS://***@host:8000/x?y=***"),
            ("http://u:S3cretPW@host/x.mp3?token=T0ken", "http://***@host/x.mp3?token=***"),
            ("http://host/x?a=1&b=&c&d=4#frag=5", "http://host/x?a=***&b=&***&d=***#frag=5"),
            ("http://example.org/a@b", "http://example.org/a@b"),
            ("http://host?q=a@b", "http://host?q=***"),
            ("icecast://source:pw@host/m", "icecast://***@host/m"),
            ("icecast://pw@host/m", "icecast://***@host/m"),
            ("tcp://root:9000", "tcp://root:9000"),
            ("/srv/music/a@b.mp3", "/srv/music/a@b.mp3"),
            ("/srv/music/a.mp3?x=1", "/srv/music/a.mp3?x=1"),
            ("file:///tmp/x.mp3", "file:///tmp/x.mp3"),
            ("http:", "http:"),
            ("://u:p@host", "://u:p@host"),
            ("", ""),
            ("not a url", "not a url"),
        ])
    func redactsOneURL(text: String, shown: String) {
        #expect(Redaction.text(text) == shown)
        #expect(SecretURL(text).description == shown)
        #expect(SecretURL(text).raw == text)
    }

    @Test func redactsEveryURLInAMessage() {
        let message =
            "upstream http://u:pw@a/x?k=v failed (redirect to \"https://b/y?token=t\"), push icecast://s:p@c/m"
        #expect(
            Redaction.text(message)
                == "upstream http://***@a/x?k=*** failed (redirect to \"https://b/y?token=***\"), push icecast://***@c/m"
        )
        #expect(!Redaction.text(message).contains("pw") && !Redaction.text(message).contains("=t"))
    }

    @Test func errorsAndMessagesThatQuoteAURLAreRedacted() {
        let error = DownloadError(
            .transfer, url: "http://u:S3cretPW@h/x?token=T0ken", "Could not GET http://u:S3cretPW@h/x")
        #expect(error.url.raw == "http://u:S3cretPW@h/x?token=T0ken")
        #expect(!error.description.contains("S3cretPW") && !error.description.contains("T0ken"))
        let configuration = ConfigurationError("station a: upstream http://u:S3cretPW@h/x?token=T0ken is bad")
        #expect(!configuration.description.contains("S3cretPW") && !configuration.description.contains("T0ken"))
        let push = PushFailure(.transfer, "Failed to connect to icecast://source:S3cretPW@h/m")
        #expect(!push.message.contains("S3cretPW"))
    }

    @Test func aSecretOnTheCommandLineWorksWithAWarning() throws {
        guard
            case .serve(let options) = try Command.parse([
                "serve", "--upstream", "http://u:S3cretPW@h/x.mp3", "--push", "icecast://source:S3cretPW@h/m.opus",
            ])
        else { throw UsageError("not serve", topic: .serve) }
        #expect(options.station.upstream == "http://u:S3cretPW@h/x.mp3")
        #expect(options.station.pushes.first?.password == "S3cretPW")
        #expect(options.secretsOnCommandLine == ["upstream", "push"])
        let warning = try #require(options.secretsWarning)
        #expect(warning.contains("@credential:NAME") && !warning.contains("S3cretPW"))
        guard case .serve(let plain) = try Command.parse(["serve", "--upstream", "http://h/x.mp3"]) else {
            throw UsageError("not serve", topic: .serve)
        }
        #expect(plain.secretsWarning == nil)
        // A DJ's password is a secret of its own: warned about, never quoted; from a credential it is not.
        guard
            case .serve(let dj) = try Command.parse([
                "serve", "--upstream", "http://h/x.mp3", "--http", "8001", "--source-password", "Dj-S3cret-1",
            ])
        else { throw UsageError("not serve", topic: .serve) }
        #expect(dj.secretsOnCommandLine == ["source-password"])
        #expect(dj.secretsWarning?.contains("--source-password") == true)
        #expect(dj.secretsWarning?.contains("Dj-S3cret-1") == false)
    }

    @Test func aBadUpstreamOptionIsQuotedRedacted() {
        for arguments in [
            ["serve", "--upstream", "http://u:S3cretPW@h/x?token=T0ken", "--bitrate", "1"],
            ["serve", "--push", "icecast://source:S3cretPW@h"],
        ] {
            let error = #expect(throws: UsageError.self) { try Command.parse(arguments) }
            #expect(error.map { !"\($0)".contains("S3cretPW") && !"\($0)".contains("T0ken") } == true, "\(arguments)")
        }
    }
}
