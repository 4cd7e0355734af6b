import Foundation
import Testing

@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Listener authentication's values: the backend call's form in Icecast 2.4's wire format, how an answer is read,
/// the credentials a player sends, and the htpasswd hashes libcrypt checks (vectors made by Apache's `htpasswd`).
@Suite struct ListenerAuthTests {
    static func credentials(_ user: String, _ password: String) -> ListenerCredentials? {
        ListenerCredentials(user: Array(user.utf8), password: Array(password.utf8))
    }

    static func call(_ action: AuthCall.Action, credentials: ListenerCredentials?) -> AuthCall {
        AuthCall(
            action: action, server: "radio.example.org", port: 8000, client: ListenerID(42),
            mount: "/main.opus?token=a b&x=1", credentials: credentials, ip: "198.18.0.7", agent: "VLC/3.0.18 LibVLC")
    }

    @Test func addCarriesIcecastsFieldsInItsOrder() {
        let body = String(
            decoding: Self.call(.add, credentials: Self.credentials("al ice", "p&ss=ü:x")).body, as: UTF8.self)
        #expect(
            body
                == "action=listener_add&server=radio.example.org&port=8000&client=42"
                + "&mount=%2Fmain.opus%3Ftoken%3Da%20b%26x%3D1&user=al%20ice&pass=p%26ss%3D%C3%BC%3Ax"
                + "&ip=198.18.0.7&agent=VLC%2F3.0.18%20LibVLC")
    }

    @Test func removeAddsDurationThenReasonAfterIcecastsFields() {
        let call = Self.call(.remove(duration: 3600, reason: .timeLimit), credentials: nil)
        #expect(
            call.fields.map(\.0) == [
                "action", "server", "port", "client", "mount", "user", "pass", "duration", "ip", "agent", "reason",
            ])
        let body = String(decoding: call.body, as: UTF8.self)
        #expect(body.hasPrefix("action=listener_remove&server=radio.example.org&port=8000&client=42&"))
        #expect(body.contains("&user=&pass=&duration=3600&ip=198.18.0.7&"))
        #expect(body.hasSuffix("&reason=time_limit"))
    }

    @Test func everyByteButUnreservedIsEncoded() {
        let all = (0...255).map { UInt8($0) }
        let encoded = AuthCall.formEncoded(all)
        #expect(PercentEncoding.decode(encoded, strict: true) == all)
        let kept = Set(encoded.filter { $0 != UInt8(ascii: "%") })
        #expect(kept.allSatisfy { $0 < 0x80 })
        #expect(!encoded.contains(UInt8(ascii: "&")) && !encoded.contains(UInt8(ascii: "=")))
    }

    static func headers(_ lines: [String]) -> ResponseHeaders {
        var headers = ResponseHeaders()
        headers.take("HTTP/1.1 200 OK")
        for line in lines { headers.take(line) }
        return headers
    }

    @Test func verdicts() {
        let icecast = AuthHeader.icecast
        #expect(
            AuthVerdict.read(status: 200, headers: Self.headers(["Icecast-Auth-User:  1 "]), header: icecast)
                == .admitted(timeLimit: nil))
        #expect(
            AuthVerdict.read(
                status: 200, headers: Self.headers(["icecast-auth-user: 1", "icecast-auth-timelimit: 900"]),
                header: icecast) == .admitted(timeLimit: 900))
        for limit in ["-1", "1.5", "99999999999999999999999", "", "9 0"] {
            #expect(
                AuthVerdict.read(
                    status: 200, headers: Self.headers(["icecast-auth-user: 1", "icecast-auth-timelimit: \(limit)"]),
                    header: icecast) == .admitted(timeLimit: nil), "\(limit)")
        }
        // An admission header is an admission whatever the status (Icecast reads only the header).
        #expect(
            AuthVerdict.read(status: 403, headers: Self.headers(["icecast-auth-user: 1"]), header: icecast)
                == .admitted(timeLimit: nil))
        #expect(
            AuthVerdict.read(status: 200, headers: Self.headers(["icecast-auth-user: 0"]), header: icecast)
                == .refused(message: nil))
        #expect(
            AuthVerdict.read(
                status: 403, headers: Self.headers(["icecast-auth-message: no \u{1B}[31msubscription"]),
                header: icecast) == .refused(message: "no [31msubscription"))
        #expect(AuthVerdict.read(status: 502, headers: Self.headers([]), header: icecast) == .failed("HTTP 502"))
        #expect(AuthVerdict.read(status: 0, headers: ResponseHeaders(), header: icecast) == .failed("no HTTP answer"))
        let custom = AuthHeader("X-Member: yes")!
        #expect(
            AuthVerdict.read(status: 200, headers: Self.headers(["x-member: yes"]), header: custom)
                == .admitted(timeLimit: nil))
        #expect(
            AuthVerdict.read(status: 200, headers: Self.headers(["icecast-auth-user: 1"]), header: custom)
                == .refused(message: nil))
    }

    @Test func authHeaders() {
        #expect(AuthHeader("icecast-auth-user: 1") == .icecast)
        #expect(AuthHeader("X-Ok:yes")?.description == "x-ok: yes")
        for bad in [
            "no colon", ": 1", "bad name: 1", "x-ok:", "x-ok: \u{7}", "x:\(String(repeating: "a", count: 300))",
        ] {
            #expect(AuthHeader(bad) == nil, "\(bad)")
        }
    }

    @Test func basicCredentials() throws {
        let basic = "Basic " + Data("alice:pa:ss".utf8).base64EncodedString()
        let credentials = try #require(ListenerCredentials.basic(basic))
        #expect(credentials.user == Array("alice".utf8) && credentials.password.bytes == Array("pa:ss".utf8))
        #expect("\(credentials)" == "alice:***" && "\(credentials.password)" == "***")
        #expect(ListenerCredentials.basic("basic " + Data(":".utf8).base64EncodedString())?.user == [])
        for bad in [
            nil, "Bearer abc", "Basic !!!", "Basic " + Data("nocolon".utf8).base64EncodedString(),
            "Basic " + Data(("u:" + String(repeating: "p", count: 1025)).utf8).base64EncodedString(),
        ] {
            #expect(ListenerCredentials.basic(bad) == nil, "\(bad ?? "nil")")
        }
    }

    /// `htpasswd -nb -B|-2|-5 alice 's3cret pw'` (apache2-utils 2.4.71).
    static let vectors = [
        "$2y$05$upQLWWmE8WWVsAC2Ji4lLOlvh6R4JrTkyysyjgyT5k/KjFNoZySvu",
        "$5$jiH4QQiHccPDDNib$4BJWDEA9/sBMFEsuv8bU4mRwmTC9D5sRpWY4aExQzp/",
        "$6$MGp33uNIFDnmjFI1$nO99MmWsUtFDmwP50R7SD1kpxT7cI7qSu6vbgldxIxpzqx/1XSs6HxBUf7AGz4/987Cr2zoPxHBG8P6TEbErd0",
    ]

    @Test(arguments: vectors) func htpasswdHashesVerify(_ hash: String) throws {
        let file = try HtpasswdFile(path: "/x", lines: [("alice:\(hash)", "/x:1"), ("bob:\(hash)", "/x:2")])
        #expect(file.count == 2)
        #expect(file.verifies(try #require(Self.credentials("alice", "s3cret pw"))))
        #expect(!file.verifies(try #require(Self.credentials("alice", "s3cret pW"))))
        #expect(!file.verifies(try #require(Self.credentials("carol", "s3cret pw"))))
        #expect(!file.verifies(try #require(Self.credentials("alice", "s3cret pw\u{0}"))))
    }

    /// The weak formats are refused at load, naming the line and what to do.
    @Test func weakHashesAreRefusedNamingTheLine() {
        let refused = [
            ("alice:$apr1$AjfNi0WX$jg4HfO6B7BmFtd4qIzkjJ.", "Apache MD5"),
            ("alice:{SHA}r+PQ/OnaVl2XSPhlHUY75Onr1SQ=", "unsalted SHA-1"),
            ("alice:ac8c7607255d40a357b413a7854d19c7", "Icecast htpasswd"),
            ("alice:I5CmGasLdvBvE", "DES crypt"),
            ("alice:s3cret pw", "plain text"),
            ("alice:$2y$05$short", "libcrypt does not take"),
            ("no colon here", "not user:hash"),
            (":$2y$05$upQLWWmE8WWVsAC2Ji4lLOlvh6R4JrTkyysyjgyT5k/KjFNoZySvu", "the user is empty"),
        ]
        for (line, words) in refused {
            #expect(throws: HtpasswdFile.LineError.self, "\(line)") {
                try HtpasswdFile(path: "/etc/radio.htpasswd", lines: [(line, "/etc/radio.htpasswd:7")])
            }
            do {
                _ = try HtpasswdFile(path: "/etc/radio.htpasswd", lines: [(line, "/etc/radio.htpasswd:7")])
            } catch {
                #expect(error.description.hasPrefix("/etc/radio.htpasswd:7: "), "\(error)")
                #expect(error.description.contains(words), "\(error)")
            }
        }
    }

    @Test func userinfoInABackendURLKeepsTheListenersCredentialsOff() {
        #expect(AuthTransfer.hasUserinfo("https://svc:key@auth.example.org/add"))
        #expect(!AuthTransfer.hasUserinfo("https://auth.example.org/add?email=a@b.org"))
        #expect(!AuthTransfer.hasUserinfo("not a url"))
    }
}

/// A protected station's HLS playlists name everything with the player's pass; a pass is read from a query only
/// when it is one.
@Suite struct HLSPassTests {
    @Test func playlistsNameEveryURIWithThePass() {
        let media = """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="ab12-init-3.mp4"
            #EXT-X-DATERANGE:ID="title-1",CLASS="net.radio-relay.title",START-DATE="2026-12-05T08:00:00.000Z",X-TITLE="URI='x.m4s'"
            #EXTINF:2.00000,
            ab12-41.m4s
            #EXTINF:2.00000,
            ab12-42.m4s?x=1

            """
        let stamped = String(
            decoding: HLSPlaylist.stamped(Array(media.utf8), query: "pass=0123456789abcdef0123456789abcdef"),
            as: UTF8.self)
        let pass = "pass=0123456789abcdef0123456789abcdef"
        #expect(
            stamped == """
                #EXTM3U
                #EXT-X-TARGETDURATION:2
                #EXT-X-MAP:URI="ab12-init-3.mp4?\(pass)"
                #EXT-X-DATERANGE:ID="title-1",CLASS="net.radio-relay.title",START-DATE="2026-12-05T08:00:00.000Z",X-TITLE="URI='x.m4s'"
                #EXTINF:2.00000,
                ab12-41.m4s?\(pass)
                #EXTINF:2.00000,
                ab12-42.m4s?x=1&\(pass)

                """)
        let variants = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=105600\n../test/live.m3u8\n"
        #expect(
            String(decoding: HLSPlaylist.stamped(Array(variants.utf8), query: pass), as: UTF8.self)
                == "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=105600\n../test/live.m3u8?\(pass)\n")
    }

    @Test func passesAreReadOnlyWhenWhole() {
        let pass = "0123456789abcdef0123456789ABCDEF"
        #expect(HTTPFrontLoop.pass(in: "pass=\(pass)") == pass)
        #expect(HTTPFrontLoop.pass(in: "token=a&pass=\(pass)&x") == pass)
        for query in [
            nil, "", "pass=", "pass=\(pass)0", "pass=\(pass.dropLast())g", "xpass=\(pass)", "pass=%20\(pass)",
        ] {
            #expect(HTTPFrontLoop.pass(in: query) == nil, "\(query ?? "nil")")
        }
    }

    @Test func protectedAnswersArePrivate() {
        let playlist = HTTPResponse(
            status: 200, contentType: PublicRouter.playlistType, bytes: Array("#EXTM3U\nx.m4s\n".utf8),
            headers: [("Cache-Control", "public, max-age=1"), ("ETag", "\"t\""), ("Last-Modified", "x")])
        let stamped = HTTPFrontLoop.stamped(playlist, pass: "p")
        #expect(stamped.headers.map(\.0) == ["Content-Type", "Cache-Control"])
        #expect(stamped.headers[1].1 == "private, no-cache" && stamped.body == Array("#EXTM3U\nx.m4s?pass=p\n".utf8))
        let segment = HTTPResponse(
            status: 200, contentType: PublicRouter.segmentType, bytes: [1, 2, 3],
            headers: [("Cache-Control", "public, max-age=26"), ("ETag", "\"s\"")])
        let kept = HTTPFrontLoop.stamped(segment, pass: "p")
        #expect(kept.headers[1] == ("Cache-Control", "private, max-age=26") && kept.headers[2].0 == "ETag")
        #expect(kept.body == [1, 2, 3])
    }
}
