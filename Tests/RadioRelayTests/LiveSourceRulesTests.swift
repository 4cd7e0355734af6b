import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport
import Testing

@testable import RadioRelay

/// The source protocol's rules as values: credentials (HTTP Basic, user `source`, constant time), the per-address
/// lockout on virtual time, Icecast's answers and admin calls, what a source's first bytes are, and the selector's
/// rule for a live input (it takes over at once, hands back, keeps the input below connected).
@Suite struct LiveSourceRulesTests {
    static func basic(_ text: String) -> String { "Basic " + Data(text.utf8).base64EncodedString() }

    @Test func credentialsAreUserSourceAndThePassword() throws {
        let password = try #require(SourcePassword("hackme-live-1"))
        #expect(password.description == "***" && "\(password)" == "***")
        #expect(password.check(nil) == .missing)
        #expect(password.check(Self.basic("source:hackme-live-1")) == .accepted)
        #expect(password.check("basic " + Data("source:hackme-live-1".utf8).base64EncodedString()) == .accepted)
        #expect(password.check(Self.basic("source:hackme-live-2")) == .wrong)
        #expect(password.check(Self.basic("admin:hackme-live-1")) == .wrong, "another user")
        #expect(password.check(Self.basic("source:hackme-live-1x")) == .wrong)
        #expect(password.check(Self.basic("source")) == .wrong, "no colon")
        #expect(password.check("Bearer hackme-live-1") == .wrong)
        #expect(password.check("Basic !!!") == .wrong)
        #expect(password.check("Basic " + String(repeating: "A", count: 5000)) == .wrong, "bounded")
        // Too short, spaces, colons, control characters: refused as a setting.
        for bad in ["short", "has space 123", "has:colon123", "tab\there123", String(repeating: "x", count: 257)] {
            #expect(SourcePassword(bad) == nil, "\(bad)")
        }
    }

    @Test func base64DecodesOnlyWhatIsBase64() {
        #expect(Base64.decode(Array("c291cmNlOnB3".utf8)) == Array("source:pw".utf8))
        #expect(Base64.decode(Array("YQ==".utf8)) == Array("a".utf8))
        #expect(Base64.decode(Array("YQ".utf8)) == Array("a".utf8), "padding is optional")
        #expect(Base64.decode(Array("Y".utf8)) == nil, "a lone sixth of a byte")
        #expect(Base64.decode(Array("YQ==YQ".utf8)) == nil, "data after padding")
        #expect(Base64.decode(Array("Y===".utf8)) == nil)
        #expect(Base64.decode(Array("Y-Q=".utf8)) == nil)
        var random = SplitMix64(seed: 7)
        for _ in 0..<2000 {
            let count = Int(random.next() % 40)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            _ = Base64.decode(bytes)  // never traps
            let encoded = Array(Data(bytes).base64EncodedString().utf8)
            #expect(Base64.decode(encoded) == bytes)
        }
    }

    /// Ten wrong logins for a station within a minute lock that station out for the address until the oldest is a
    /// minute old, the right password included; a request without credentials is no failure; other addresses, and
    /// other stations from the same address, are not touched; the table stays bounded.
    @Test func wrongCredentialsLockAStationOutForAnAddressForAMinute() throws {
        var lockout = SourceLockout()
        let guesser = SourceLockout.Key.source("main", HostKey(ipv4: 0x7F00_0002))
        let other = SourceLockout.Key.source("main", HostKey(ipv4: 0x7F00_0003))
        let otherStation = SourceLockout.Key.source("studio", HostKey(ipv4: 0x7F00_0002))
        for second in 0..<10 {
            #expect(lockout.lockedOut(guesser, now: Double(second)) == nil)
            lockout.failed(guesser, now: Double(second))
        }
        let wait = try #require(lockout.lockedOut(guesser, now: 10))
        #expect(abs(wait - 50) < 1e-9, "until the first failure is a minute old")
        #expect(lockout.lockedOut(other, now: 10) == nil)
        #expect(lockout.lockedOut(otherStation, now: 10) == nil, "another station's DJ behind the same address")
        #expect(lockout.count(otherStation, now: 10) == 0)
        #expect(lockout.lockedOut(guesser, now: 59.9) != nil)
        #expect(lockout.lockedOut(guesser, now: 60) == nil, "the first failure left the window")
        lockout.failed(guesser, now: 60)
        #expect(lockout.lockedOut(guesser, now: 60.5) != nil, "ten within the last minute again")
        #expect(lockout.count(guesser, now: 60.5) == 10)
        // Slow guessing (one every 7 s) never locks out: at most 9 in a minute.
        var slow = SourceLockout()
        for step in 0..<100 {
            slow.failed(other, now: Double(step) * 7)
            #expect(slow.lockedOut(other, now: Double(step) * 7) == nil)
        }
        // Bounded: a spray of addresses keeps at most `maxAddresses`.
        var spray = SourceLockout()
        for address in 0..<(SourceLockout.maxAddresses + 500) {
            spray.failed(.source("main", HostKey(ipv4: UInt32(address))), now: Double(address) / 1000)
        }
        #expect(spray.addresses <= SourceLockout.maxAddresses)
    }

    static func request(
        _ method: String, _ target: String, _ fields: [(String, String)] = [], version: String = "HTTP/1.1"
    ) throws -> HTTPRequestHead.Request {
        let text = "\(method) \(target) \(version)\r\nHost: a\r\n" + fields.map { "\($0): \($1)\r\n" }.joined() + "\r\n"
        guard case .request(let request) = HTTPRequestHead.parse(Array(text.utf8), limit: 8192) else {
            throw SystemError("not a request: \(text)", errno: EINVAL)
        }
        return request
    }

    @Test func acceptanceAndRefusalsAreIcecasts() throws {
        let put = try Self.request("PUT", "/main", [("Expect", "100-continue"), ("Content-Type", "audio/mpeg")])
        #expect(
            String(decoding: SourceRules.acceptance(put, continues: true), as: UTF8.self)
                == "HTTP/1.1 100 Continue\r\n\r\n")
        let source = try Self.request("SOURCE", "/main", version: "HTTP/1.0")
        #expect(
            String(decoding: SourceRules.acceptance(source, continues: false), as: UTF8.self).hasPrefix(
                "HTTP/1.0 200 OK\r\n"))
        #expect(SourceRules.refusal(put) == nil)
        #expect(SourceRules.refusal(try Self.request("PUT", "/main", [("Content-Type", "application/ogg")])) == nil)
        for type in ["audio/aac", "audio/aacp", "audio/flac", "audio/ogg; codecs=vorbis", "audio/wav", "audio/webm"] {
            let refused = SourceRules.refusal(try Self.request("PUT", "/main", [("Content-Type", type)]))
            #expect(refused?.status == 415 && refused?.textBody.contains("send MP3 or Ogg Opus") == true, "\(type)")
        }
        #expect(
            SourceRules.refusal(try Self.request("PUT", "/main", [("Transfer-Encoding", "chunked")]))?.status == 501)
        let unauthorized = SourceRules.unauthorized()
        #expect(unauthorized.status == 401)
        #expect(unauthorized.headers.contains { $0.0 == "WWW-Authenticate" && $0.1.hasPrefix("Basic realm=") })
        // The source's description: printable, bounded, URLs redacted.
        let described = SourceRules.describe(
            try Self.request(
                "PUT", "/main",
                [
                    ("User-Agent", "butt 0.1.40"), ("ice-name", "DJ Set"), ("ice-genre", "house"),
                    ("ice-url", "http://user:secret@dj.example/"),
                    ("ice-description", String(repeating: "d", count: 900)),
                ]))
        #expect(described.userAgent == "butt 0.1.40" && described.info.displayName == "DJ Set")
        #expect(described.info.genre == "house" && described.info.url?.contains("secret") == false)
        #expect((described.info.description?.count ?? 0) <= Sanitized.headerLimit)
    }

    /// An admin call's answer now (a command is answered by the station: the killsource test looks at it).
    static func admin(_ request: HTTPRequestHead.Request, desk: SourceDesk) -> HTTPResponse {
        switch SourceRules.admin(request, desk: desk) {
        case .respond(let response): return response
        case .command(let command): return HTTPResponse.text(500, "a command: \(command)")
        }
    }

    @Test func adminCallsSetTheTitleAndEndTheSource() throws {
        let desk = SourceDesk(station: "main", password: SourcePassword("hackme-live-1"), paths: ["/main"], timeout: 10)
        let metadata = try Self.request("GET", "/admin/metadata?mount=/main&mode=updinfo&song=Hello+W%C3%B6rld")
        #expect(SourceRules.mount(of: metadata) == "/main")
        #expect(Self.admin(metadata, desk: desk).status == 400, "no source on the air")
        let source = LiveSource(
            socket: try connectedSocket(), peer: try #require(SocketAddress(host: "127.0.0.1", port: 1)),
            request: .init(method: "PUT", path: "/main"), early: [], stallTimeout: 10)
        var info = StationInfo()
        info.displayName = "DJ Set"
        #expect(desk.deliver(Handoff(value: source), info: info))
        #expect(!desk.deliver(Handoff(value: source), info: StationInfo()), "one source at a time")
        #expect(desk.liveInfo?.displayName == "DJ Set")
        let answer = Self.admin(metadata, desk: desk)
        #expect(answer.status == 200 && answer.textBody.contains("<return>1</return>"))
        #expect(desk.takeTitle() == "Hello Wörld" && desk.takeTitle() == nil)
        // artist and title, ISO-8859-1 as libshout may send it, and what is not a title.
        let latin = try Self.request(
            "GET", "/admin/metadata?mode=updinfo&mount=%2Fmain&charset=ISO-8859-1&artist=Bj%F6rk&title=J%F3ga")
        #expect(Self.admin(latin, desk: desk).status == 200 && desk.takeTitle() == "Björk - Jóga")
        let empty = try Self.request("GET", "/admin/metadata?mount=/main&mode=updinfo&song=")
        #expect(Self.admin(empty, desk: desk).status == 400)
        let control = try Self.request("GET", "/admin/metadata?mount=/main&mode=updinfo&song=a%0D%0AX:%20b%07")
        #expect(Self.admin(control, desk: desk).status == 200)
        #expect(desk.takeTitle().map { !$0.contains("\r") && !$0.contains("\n") && !$0.contains("\u{7}") } == true)
        let huge = try Self.request(
            "GET", "/admin/metadata?mount=/main&mode=updinfo&song=" + String(repeating: "x", count: 4000))
        #expect(Self.admin(huge, desk: desk).status == 200)
        #expect((desk.takeTitle()?.count ?? 0) <= Sanitized.titleLimit)
        #expect(Self.admin(try Self.request("GET", "/admin/listclients?mount=/main"), desk: desk).status == 404)
        // killsource: a command for the pipeline, answered as Icecast does once the pipeline answered (or not).
        guard
            case .command(let command) = SourceRules.admin(
                try Self.request("GET", "/admin/killsource?mount=/main"), desk: desk)
        else {
            Issue.record("killsource is not a command")
            return
        }
        #expect(command == .killSource)
        let removed = SourceRules.killAnswer(.done("ended"))
        #expect(removed.status == 200 && removed.textBody.contains("Source Removed"))
        #expect(removed.textBody.contains("<return>1</return>"))
        #expect(SourceRules.killAnswer(.refused("none")).status == 400)
        #expect(
            SourceRules.killAnswer(nil).status == 503
                && SourceRules.killAnswer(nil).textBody.contains("<return>0</return>"))
        #expect(desk.takeArrival() != nil && desk.takeArrival() == nil)
        desk.release()
        #expect(!desk.isOccupied && desk.liveInfo == nil)
    }

    @Test func queryParametersArePercentDecoded() {
        let parameters = SourceRules.parameters("a=1&b=%41%42+c&a=2&c&d=%4&e=%zz&F=x")
        #expect(parameters["a"] == Array("1".utf8), "the first of a name")
        #expect(parameters["b"] == Array("AB c".utf8))
        #expect(parameters["c"] == [] && parameters["d"] == Array("%4".utf8) && parameters["e"] == Array("%zz".utf8))
        #expect(parameters["f"] == Array("x".utf8), "names in any case")
        let many = (0..<100).map { "k\($0)=v" }.joined(separator: "&")
        #expect(SourceRules.parameters(many).count == 32, "bounded")
    }

    @Test func aSourcesFirstBytesSayWhatItIs() throws {
        func recognise(_ bytes: [UInt8]) throws(UnsupportedFormat) -> DataFormat.Codec? {
            try SourceFormat.recognise(bytes)
        }
        var opus = Array("OggS".utf8) + [UInt8](repeating: 0, count: 24) + Array("OpusHead".utf8)
        opus += [UInt8](repeating: 0, count: 64 - opus.count)
        #expect(try recognise(Array(opus.prefix(3))) == nil, "too few bytes")
        #expect(try recognise(Array(opus.prefix(40))) == nil, "an Ogg page not yet long enough")
        #expect(try recognise(opus) == .opus)
        #expect(try recognise([0xFF, 0xFB, 0x90, 0x44]) == .mpeg)
        #expect(try recognise(Array("ID3\u{4}".utf8)) == .mpeg)
        var vorbis = Array("OggS".utf8) + [UInt8](repeating: 0, count: 24) + [1] + Array("vorbis".utf8)
        vorbis += [UInt8](repeating: 0, count: 64 - vorbis.count)
        for (bytes, name) in [
            (vorbis, "Ogg Vorbis"), (Array("fLaC\0\0".utf8), "FLAC"), (Array("RIFF....WAVE".utf8), "WAV"),
            ([0xFF, 0xF1, 0x50, 0x80], "AAC"), ([0x1A, 0x45, 0xDF, 0xA3], "WebM"),
        ] {
            #expect(throws: UnsupportedFormat.self, "\(name)") { try recognise(bytes) }
            do {
                _ = try recognise(bytes)
            } catch {
                #expect(error.description.hasPrefix(name) || error.description.contains(name), "\(error)")
            }
        }
    }

    // MARK: The selector

    static var liveSettings: InputSelector.Settings {
        var settings = InputSelector.Settings()
        settings.live = true
        return settings
    }

    /// The station starts on its first other input; a source takes over as soon as it flows (no `recover` wait), the
    /// input below stays connected while it plays, and its end hands back at once.
    @Test func aLiveSourceTakesOverAtOnceAndHandsBack() {
        var selector = InputSelector(inputs: 3, settings: Self.liveSettings)
        #expect(selector.playing == 1)
        selector.failed(0, reason: "no live source connected", now: 0)
        selector.flowing(1, now: 0)
        #expect(selector.decide(now: 0) == nil && selector.playing == 1)
        #expect(selector.shouldConnect(1, now: 0) && !selector.shouldConnect(2, now: 0))
        selector.flowing(0, now: 5)
        #expect(selector.decide(now: 5) == .init(from: 1, to: 0, reason: .live, at: 5))
        #expect(selector.shouldConnect(1, now: 5), "the input below stays connected under the live source")
        #expect(!selector.shouldConnect(2, now: 5))
        selector.failed(0, reason: "disconnected", now: 9)
        #expect(selector.decide(now: 9) == .init(from: 0, to: 1, reason: .handBack, at: 9))
        // Without `live`, the same input waits for `recover`.
        var plain = InputSelector(inputs: 2)
        plain.failed(0, reason: "down", now: 0)
        plain.flowing(1, now: 0)
        _ = plain.decide(now: 0)
        plain.flowing(0, now: 5)
        #expect(plain.decide(now: 5) == nil)
    }

    /// A live-only station: the live input is all it has; it plays its silence until a source comes.
    @Test func aLiveOnlyStationWaitsForItsSource() {
        var selector = InputSelector(inputs: 1, settings: Self.liveSettings)
        #expect(selector.playing == 0)
        selector.failed(0, reason: "no live source connected", now: 0)
        #expect(selector.decide(now: 0) == nil && selector.playing == 0)
        selector.flowing(0, now: 3)
        #expect(selector.decide(now: 3) == nil && selector.isHealthy(0, now: 3))
    }
}

/// One end of a connected pair of stream sockets (the other is closed).
func connectedSocket() throws -> FileDescriptor {
    var fds: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
        throw SystemError("socketpair", errno: errno)
    }
    close(fds[1])
    return FileDescriptor(owning: fds[0])
}
