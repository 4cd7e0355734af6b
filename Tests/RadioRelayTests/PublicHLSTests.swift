import Foundation
import Testing

@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The HLS answers of the public HTTP address without sockets: playlists and segments with the headers a cache
/// needs, validators and 304, HEAD, 404 for what left the window, 503 before the first segment, keep-alive by the
/// request's version and `Connection`, and the multivariant playlist of a station's two outputs.
@Suite struct PublicHLSTests {
    static let start = 1_800_000_000.0

    /// A station with two outputs (`/jazz.opus` stereo, `/jazz-low.opus` mono), each with 30 s of packets in its HLS
    /// stream, and a third mount whose stream has no segment yet.
    static func directory() -> (PublicDirectory, HLSStream) {
        func stream(channels: Int, packet: [UInt8], seconds: Double) -> HLSStream {
            let stream = HLSStream(settings: HLSSegmenter.Settings(), now: start)
            let head = OpusRepager.defaultHead(channels: channels)
            var pages = [OggPage(bytes: page([head]))]
            stream.setHeaders(pages, now: start)
            pages = (0..<Int(seconds * 10)).map { _ in OggPage(bytes: page(Array(repeating: packet, count: 5))) }
            stream.publish(pages, now: start + 30)
            return stream
        }
        let jazz = stream(channels: 2, packet: [0xFC] + [UInt8](repeating: 1, count: 239), seconds: 30)
        let low = stream(channels: 1, packet: [0xF8] + [UInt8](repeating: 2, count: 79), seconds: 30)
        let empty = stream(channels: 2, packet: [0xFC], seconds: 0)
        let mounts = [
            PublicDirectory.Mount(
                path: "/jazz.opus", eventsPath: "/jazz/events", station: "jazz", bitrate: 96_000, hls: jazz),
            PublicDirectory.Mount(
                path: "/jazz-low.opus", eventsPath: "/jazz-low/events", station: "jazz", rendition: "low",
                bitrate: 32_000, channels: 1, hls: low),
            PublicDirectory.Mount(path: "/news.opus", eventsPath: "/news/events", station: "news", hls: empty),
        ]
        return (PublicDirectory(mounts: mounts), jazz)
    }

    /// One Ogg page holding `packets` (each under 255 bytes), as the splitter reads them.
    static func page(_ packets: [[UInt8]]) -> [UInt8] {
        var bytes = Array("OggS".utf8) + [0, 0] + [UInt8](repeating: 0, count: 20) + [UInt8(packets.count)]
        for packet in packets { bytes.append(UInt8(packet.count)) }
        for packet in packets { bytes += packet }
        return bytes
    }

    static func answer(_ request: String) -> HTTPResponse? {
        let (directory, _) = Self.directory()
        let head = HTTPRequestHead.parse(Array(request.utf8), limit: 8192)
        switch PublicRouter.route(head, directory: directory, now: start + 31) {
        case .respond(let response), .hls(_, let response, _): return response
        default: return nil
        }
    }

    static func header(_ response: HTTPResponse, _ name: String) -> String? {
        response.headers.first { $0.0 == name }?.1
    }

    @Test func thePlaylistIsCachedForHalfASegmentAndKeepsTheConnection() throws {
        let (_, jazz) = Self.directory()
        let response = try #require(Self.answer("GET /jazz/live.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(response.status == 200 && response.keepAlive)
        #expect(response.body == jazz.snapshot.playlist)
        #expect(Self.header(response, "Content-Type") == "application/vnd.apple.mpegurl")
        #expect(Self.header(response, "Cache-Control") == "public, max-age=1")
        #expect(Self.header(response, "Access-Control-Allow-Origin") == "*")
        #expect(Self.header(response, "Date") == "Fri, 15 Jan 2027 08:00:31 GMT")
        #expect(Self.header(response, "Last-Modified") == "Fri, 15 Jan 2027 08:00:30 GMT")
        let tag = try #require(Self.header(response, "ETag"))
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.hasPrefix("#EXTM3U\n") && text.contains("#EXT-X-MAP:URI=\"\(jazz.token)-init-"))
        let head = String(decoding: response.encodedHead, as: UTF8.self)
        #expect(
            head.contains("\r\nContent-Length: \(response.body.count)\r\n")
                && head.hasSuffix("Connection: keep-alive\r\n\r\n"))
        // Revalidated: 304 without a body.
        let again = try #require(
            Self.answer("GET /jazz/live.m3u8 HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tag)\r\n\r\n"))
        #expect(again.status == 304 && again.payload.isEmpty && again.keepAlive)
    }

    @Test func keepAliveFollowsTheVersionAndConnection() throws {
        let cases = [
            ("HTTP/1.1", "", true), ("HTTP/1.1", "Connection: close\r\n", false), ("HTTP/1.0", "", false),
            ("HTTP/1.0", "Connection: Keep-Alive\r\n", true),
        ]
        for (version, field, kept) in cases {
            let response = try #require(Self.answer("GET /jazz/live.m3u8 \(version)\r\nHost: x\r\n\(field)\r\n"))
            #expect(response.keepAlive == kept, "\(version) \(field)")
            let head = String(decoding: response.encodedHead, as: UTF8.self)
            #expect(head.contains(kept ? "Connection: keep-alive" : "Connection: close"))
        }
    }

    /// A request that announces a body is answered, but never keeps its connection: what follows its head is its
    /// body, not a next request (RFC 9112 §6.3).
    @Test func aRequestWithABodyClosesItsConnection() throws {
        for field in ["Content-Length: 40\r\n", "Transfer-Encoding: chunked\r\n"] {
            let response = try #require(Self.answer("GET /jazz/live.m3u8 HTTP/1.1\r\nHost: x\r\n\(field)\r\n"))
            #expect(response.status == 200 && !response.keepAlive, "\(field)")
            #expect(String(decoding: response.encodedHead, as: UTF8.self).contains("Connection: close"))
        }
        let empty = try #require(Self.answer("GET /jazz/live.m3u8 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"))
        #expect(empty.keepAlive)
        let twoLengths = try #require(
            Self.answer("GET /jazz/live.m3u8 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"))
        #expect(twoLengths.status == 400 && !twoLengths.keepAlive)
        let absolute = try #require(Self.answer("GET http://radio.example/jazz/live.m3u8 HTTP/1.1\r\n\r\n"))
        #expect(absolute.status == 200)
    }

    @Test func segmentsAreCachedForTheirLifetimeAndGoneAfterIt() throws {
        let (_, jazz) = Self.directory()
        let snapshot = jazz.snapshot
        // 30 s of 2 s segments: 14 closed, 13 still fetchable, the first gone.
        #expect(snapshot.segments.count == 13)
        let segment = try #require(snapshot.segments.last)
        let name = HLSPlaylist.segmentName(token: jazz.token, sequence: segment.sequence)
        let response = try #require(Self.answer("GET /jazz/\(name) HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(response.status == 200 && response.body == segment.bytes && response.keepAlive)
        #expect(Self.header(response, "Content-Type") == "audio/mp4")
        #expect(Self.header(response, "Cache-Control") == "public, max-age=26")
        #expect(Self.header(response, "ETag") == "\"\(jazz.token)-\(segment.sequence)\"")
        let head = try #require(Self.answer("HEAD /jazz/\(name) HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(head.status == 200 && head.payload.isEmpty)
        #expect(
            String(decoding: head.encodedHead, as: UTF8.self).contains("Content-Length: \(segment.bytes.count)\r\n"))
        let map = try #require(snapshot.maps.first)
        let initAnswer = try #require(
            Self.answer("GET /jazz/\(HLSPlaylist.initName(token: jazz.token, id: map.id)) HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(initAnswer.status == 200 && initAnswer.body == map.bytes)
        #expect(Self.header(initAnswer, "Cache-Control") == "public, max-age=86400, immutable")
        let gone = [
            HLSPlaylist.segmentName(token: jazz.token, sequence: snapshot.segments[0].sequence - 1),
            HLSPlaylist.segmentName(token: jazz.token, sequence: segment.sequence + 1),
            HLSPlaylist.segmentName(token: "other", sequence: segment.sequence), "nothing.ts",
        ]
        for name in gone {
            let response = try #require(Self.answer("GET /jazz/\(name) HTTP/1.1\r\nHost: x\r\n\r\n"))
            #expect(response.status == 404 && Self.header(response, "Cache-Control") == "no-cache", "\(name)")
            #expect(response.keepAlive)
        }
    }

    @Test func beforeItsFirstSegmentAStreamSaysWhenToComeBack() throws {
        let response = try #require(Self.answer("GET /news/live.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(response.status == 503 && Self.header(response, "Retry-After") == "2")
        #expect(Self.header(response, "Cache-Control") == "no-cache")
    }

    @Test func theMultivariantPlaylistListsTheStationsOutputs() throws {
        for path in ["/jazz/master.m3u8", "/jazz-low/master.m3u8"] {
            let response = try #require(Self.answer("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n"))
            let lines = String(decoding: response.body, as: UTF8.self).split(separator: "\n").map(String.init)
            #expect(lines.prefix(3) == ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"])
            #expect(lines.count == 7, "\(lines)")
            // The stereo output first (more bits per second), then the mono one; each of the news station's absent.
            #expect(lines[3].hasPrefix("#EXT-X-STREAM-INF:BANDWIDTH=") && lines[3].contains("CHANNELS=\"2\""))
            #expect(lines[3].contains("CODECS=\"opus\"") && lines[3].contains("NAME=\"jazz\""))
            #expect(lines[4] == "../jazz/live.m3u8" && lines[6] == "../jazz-low/live.m3u8")
            #expect(lines[5].contains("CHANNELS=\"1\"") && lines[5].contains("NAME=\"low\""))
            // 240-byte packets every 20 ms and their boxes: about 97 kbit/s; 80 bytes: about 33.
            let bandwidth = Int(lines[3].split(separator: "=")[1].split(separator: ",")[0]) ?? 0
            #expect((96_000...100_000).contains(bandwidth), "\(lines[3])")
        }
    }
}

/// Icecast's `/status-json.xsl` on the public address: one mount as an object, several as an array, the members and
/// their JSON types, dates in Icecast's two formats, the `Host` echoed only when it is a plain host.
@Suite struct IcecastStatusTests {
    static func answer(_ directory: PublicDirectory, host: String = "radio.example:8001") throws -> [String: Any] {
        let request = "GET /status-json.xsl HTTP/1.1\r\nHost: \(host)\r\n\r\n"
        let head = HTTPRequestHead.parse(Array(request.utf8), limit: 8192)
        guard case .respond(let response) = PublicRouter.route(head, directory: directory, host: "127.0.0.1:8001")
        else { throw ConfigurationError("not answered") }
        #expect(response.status == 200 && response.headers.contains { $0 == ("Access-Control-Allow-Origin", "*") })
        #expect(response.headers.contains { $0 == ("Content-Type", "application/json; charset=UTF-8") })
        let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return try #require(json?["icestats"] as? [String: Any])
    }

    static func mount(_ path: String, station: String, title: String? = nil) -> PublicDirectory.Mount {
        var info = StationInfo()
        info.displayName = "Jazz FM"
        var mount = PublicDirectory.Mount(
            path: path, eventsPath: PublicDirectory.eventsPath(forMount: path), station: station, info: info,
            title: title, bitrate: 96_000)
        mount.listeners = 3
        mount.listenerPeak = 7
        mount.streamStart = 1_800_000_000
        return mount
    }

    @Test func oneMountIsAnObjectSeveralAnArray() throws {
        var directory = PublicDirectory(mounts: [Self.mount("/jazz.opus", station: "jazz", title: "Miles \"So\"")])
        directory.serverStart = 1_799_999_999
        let one = try Self.answer(directory)
        #expect(one["server_start"] as? String == "Fri, 15 Jan 2027 07:59:59 +0000")
        #expect(one["server_start_iso8601"] as? String == "2027-01-15T07:59:59+0000")
        #expect(one["host"] as? String == "radio.example" && one["location"] is String && one["admin"] is String)
        let source = try #require(one["source"] as? [String: Any])
        #expect(source["listenurl"] as? String == "http://radio.example:8001/jazz.opus")
        #expect(source["listeners"] as? Int == 3 && source["listener_peak"] as? Int == 7)
        #expect(source["server_name"] as? String == "Jazz FM" && source["title"] as? String == "Miles \"So\"")
        #expect(source["genre"] as? String == "various" && source["server_type"] as? String == "audio/ogg")
        #expect(source["bitrate"] as? Int == 96 && source["subtype"] as? String == "Opus")
        #expect(source["stream_start_iso8601"] as? String == "2027-01-15T08:00:00+0000")
        #expect(source["server_url"] == nil)

        directory.mounts.append(Self.mount("/jazz-low.opus", station: "jazz"))
        let two = try Self.answer(directory, host: "<script>")
        let sources = try #require(two["source"] as? [[String: Any]])
        #expect(sources.count == 2 && sources[1]["title"] == nil)
        // A Host that is not a plain host is not echoed: the front end's address instead.
        #expect(sources[1]["listenurl"] as? String == "http://127.0.0.1:8001/jazz-low.opus")
        #expect(try Self.answer(PublicDirectory())["source"] == nil)
    }

    /// An MP3 pass-through mount as icecast2 2.4.4 shows an MP3 source (checked by hand with ffmpeg as its source:
    /// `server_type` `audio/mpeg`, no `subtype`), with the upstream's rate and channels in `audio_info`.
    @Test func anMP3MountIsAudioMpegWithoutSubtype() throws {
        var mp3 = Self.mount("/jazz.mp3", station: "jazz")
        mp3.format = .mp3
        mp3.bitrate = 128_000
        mp3.sampleRate = 44_100
        let source = try #require(try Self.answer(PublicDirectory(mounts: [mp3]))["source"] as? [String: Any])
        #expect(source["server_type"] as? String == "audio/mpeg" && source["subtype"] == nil)
        #expect(source["audio_info"] as? String == "channels=2;samplerate=44100;bitrate=128")
        #expect(source["listenurl"] as? String == "http://radio.example:8001/jazz.mp3")
    }
}
