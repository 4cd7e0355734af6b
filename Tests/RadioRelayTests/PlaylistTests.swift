import Foundation
import RadioRelayMedia
import RadioRelayNet
import Testing

@testable import RadioRelay

/// Playlists for every mount (M3U, PLS v2, XSPF as Icecast's), their absolute URLs from `public_url` or the request's
/// plain `Host`, `/status-json.xsl`'s `listenurl` the same way, and the configuration's refusals.
@Suite struct PlaylistTests {
    static func directory(publicURL: String? = nil) -> PublicDirectory {
        var info = StationInfo()
        info.displayName = "Jazz & <Blues>"
        info.genre = "jazz"
        info.url = "https://jazz.example.org/"
        var opus = PublicDirectory.Mount(path: "/jazz.opus", eventsPath: "/jazz/events", station: "jazz", info: info)
        opus.bitrate = 96_000
        var mp3 = PublicDirectory.Mount(path: "/jazz.mp3", eventsPath: "/jazz.mp3/events", station: "jazz", info: info)
        mp3.format = .mp3
        var directory = PublicDirectory(mounts: [opus, mp3])
        directory.publicURL = publicURL.flatMap(PublicURL.init)
        return directory
    }

    static func get(
        _ path: String, host: String? = "relay.example:8001", directory: PublicDirectory, method: String = "GET"
    )
        -> HTTPResponse?
    {
        let text =
            "\(method) \(path) HTTP/1.\(host == nil ? 0 : 1)\r\n" + (host.map { "Host: \($0)\r\n" } ?? "") + "\r\n"
        guard
            case .respond(let response) = PublicRouter.route(
                HTTPRequestHead.parse(Array(text.utf8), limit: 8192), directory: directory, host: "10.0.0.1:8001")
        else { return nil }
        return response
    }

    static func text(_ response: HTTPResponse?) -> String { String(decoding: response?.payload ?? [], as: UTF8.self) }

    @Test func eachKindForEachMount() throws {
        let directory = Self.directory()
        let m3u = try #require(Self.get("/jazz.opus.m3u", directory: directory))
        #expect(m3u.status == 200 && m3u.headers.first?.1 == "audio/x-mpegurl")
        #expect(Self.text(m3u) == "#EXTM3U\n#EXTINF:-1,Jazz & <Blues>\nhttp://relay.example:8001/jazz.opus\n")
        #expect(m3u.headers.filter { $0.0 == "Cache-Control" }.map(\.1) == ["public, max-age=60"])
        #expect(m3u.headers.contains { $0 == ("Access-Control-Allow-Origin", "*") })
        let pls = Self.text(Self.get("/jazz.mp3.pls", directory: directory))
        #expect(
            pls == "[playlist]\nNumberOfEntries=1\nFile1=http://relay.example:8001/jazz.mp3\nTitle1=Jazz & <Blues>\n"
                + "Length1=-1\nVersion=2\n")
        let xspf = Self.text(Self.get("/jazz.opus.xspf", directory: directory))
        #expect(xspf.contains("<location>http://relay.example:8001/jazz.opus</location>"))
        #expect(xspf.contains("<title>Jazz &amp; &lt;Blues&gt;</title>") && !xspf.contains("<Blues>"))
        #expect(xspf.contains("<info>https://jazz.example.org/</info>") && xspf.contains("Stream Genre: jazz"))
        #expect(xspf.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<playlist xmlns=\"http://xspf.org/ns/0/\""))
        #expect(Self.get("/jazz.opus.m3u", directory: directory, method: "HEAD")?.payload.isEmpty == true)
        #expect(Self.get("/other.opus.m3u", directory: directory)?.status == 404)
        #expect(Self.get("/jazz/live.m3u8", directory: directory)?.status == 404, "HLS stays HLS's")
    }

    @Test func theURLInsideComesFromPublicURLOrAPlainHost() {
        let behindTLS = Self.directory(publicURL: "https://radio.example.org/")
        #expect(
            Self.text(Self.get("/jazz.opus.m3u", directory: behindTLS)).contains(
                "\nhttps://radio.example.org/jazz.opus\n"))
        let prefixed = Self.directory(publicURL: "https://example.org/radio")
        #expect(
            Self.text(Self.get("/jazz.mp3.pls", directory: prefixed)).contains(
                "File1=https://example.org/radio/jazz.mp3"))
        // A Host that is not a plain host[:port] is never echoed: the front end's address instead.
        let plain = Self.directory()
        for host in ["evil.example/x", "a b", "x\"y", "user@host"] {
            #expect(
                Self.text(Self.get("/jazz.opus.m3u", host: host, directory: plain)).contains(
                    "http://10.0.0.1:8001/jazz.opus"), "\(host)")
        }
        #expect(Self.text(Self.get("/jazz.opus.m3u", host: nil, directory: plain)).contains("http://10.0.0.1:8001/"))
        // /status-json.xsl's listenurl: the same base.
        let status = Self.text(Self.get("/status-json.xsl", directory: behindTLS))
        #expect(status.contains("\"listenurl\":\"https://radio.example.org/jazz.opus\""), "\(status)")
        #expect(
            Self.text(Self.get("/status-json.xsl", directory: plain)).contains(
                "\"listenurl\":\"http://relay.example:8001/jazz.opus\""))
    }

    @Test func publicURLIsASchemeAHostAndAPath() {
        #expect(PublicURL("https://radio.example.org")?.base == "https://radio.example.org")
        #expect(PublicURL("HTTPS://radio.example.org:8443/a/")?.base == "https://radio.example.org:8443/a")
        #expect(PublicURL("http://[::1]:8000")?.base == "http://[::1]:8000")
        for bad in [
            "radio.example.org", "ftp://x", "https://", "https://u:p@x", "https://x/?a=1", "https://x/a b",
            "https://x/#f",
        ] {
            #expect(PublicURL(bad) == nil, "\(bad)")
        }
    }

    @Test func theConfiguration() throws {
        let configuration = try ConfigFileTests.parse(
            "[server]\nhttp = 8100\npublic_url = https://radio.example.org\n[station main]\nupstream = /a.mp3\n")
        #expect(configuration.server.publicURL?.base == "https://radio.example.org")
        let messages = ConfigFileErrorTests.messages("[station main]\nupstream = /a.mp3\nmount = main.m3u\n")
        #expect(messages.contains { $0.contains("mount main.m3u ends like a playlist") }, "\(messages)")
        let bad = ConfigFileErrorTests.messages(
            "[server]\npublic_url = radio.example.org\n[station main]\nupstream = /a.mp3\n")
        #expect(
            bad.contains { $0.hasPrefix("r.conf:2: public_url = radio.example.org: use http:// or https://") }, "\(bad)"
        )
    }
}
