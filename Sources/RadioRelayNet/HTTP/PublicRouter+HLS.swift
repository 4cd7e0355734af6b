import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The HLS answers under a mount's directory (`/NAME/`), made for HTTP caches and CDNs:
///
/// | name | answer | `Cache-Control` |
/// |---|---|---|
/// | `live.m3u8` | the media playlist (503 before the first segment) | `max-age` half a segment (at least 1 s) |
/// | `master.m3u8` | the multivariant playlist: every output of the station | the same |
/// | `TOKEN-SEQ.m4s` | a media segment while it can be fetched, else 404 | `max-age` its lifetime |
/// | `TOKEN-init-ID.mp4` | an init segment, else 404 | a day, `immutable` (its name is never reused) |
///
/// Segments and playlists carry `ETag` and `Last-Modified` (`If-None-Match` is answered 304), every answer `Date`
/// and CORS `*`, and the connection stays open for the next request unless the client asks otherwise.
extension PublicRouter {
    package static let playlistType = "application/vnd.apple.mpegurl"
    package static let segmentType = "audio/mp4"

    package static func hls(
        _ request: HTTPRequestHead.Request, directory: PublicDirectory, mount index: Int, name: Substring, now: Double
    ) -> HTTPResponse {
        let mount = directory.mounts[index]
        guard let stream = mount.hls else { return text(404, "no HLS stream here\n") }
        let snapshot = stream.snapshot
        let settings = snapshot.settings
        let playlistAge = max(1, Int(settings.segmentSeconds / 2))
        var response: HTTPResponse
        switch HLSPlaylist.resource(name, token: snapshot.token) {
        case .media:
            guard !snapshot.playlist.isEmpty else {
                response = uncached(text(503, "the first segment is not ready yet\n"))
                response.headers.append(("Retry-After", "\(settings.targetDuration)"))
                break
            }
            response = answer(
                snapshot.playlist, type: playlistType, tag: "\(snapshot.token)-p\(snapshot.newest)",
                modified: snapshot.updated, cache: "public, max-age=\(playlistAge)", request: request)
        case .multivariant:
            let body = Array(HLSPlaylist.multivariant(variants(of: mount, in: directory)).utf8)
            response = HTTPResponse(
                status: 200, contentType: playlistType, bytes: body,
                headers: [("Cache-Control", "public, max-age=\(playlistAge)")])
        case .segment(let sequence):
            guard let segment = snapshot.segment(sequence) else { return gone(request, stream, now: now) }
            let lifetime = Int((Double(settings.window + settings.retained) * settings.segmentSeconds).rounded(.up))
            response = answer(
                segment.bytes, type: segmentType, tag: "\(snapshot.token)-\(sequence)", modified: segment.made,
                cache: "public, max-age=\(lifetime)", request: request)
        case .initSegment(let id):
            guard let map = snapshot.initSegment(id) else { return gone(request, stream, now: now) }
            response = answer(
                map.bytes, type: segmentType, tag: "\(snapshot.token)-init-\(id)", modified: map.made,
                cache: "public, max-age=86400, immutable", request: request)
        case nil:
            return gone(request, stream, now: now)
        }
        stream.answered.add(1, ordering: .relaxed)
        return finish(response, request, now: now)
    }

    /// A 200 (or a 304 when the client has this version) of a resource with a validator.
    private static func answer(
        _ bytes: [UInt8], type: String, tag: String, modified: Double, cache: String,
        request: HTTPRequestHead.Request
    ) -> HTTPResponse {
        let etag = "\"\(tag)\""
        let headers = [("Cache-Control", cache), ("ETag", etag), ("Last-Modified", httpDate(modified))]
        if let match = request.field("if-none-match"), match == "*" || match.contains(etag) {
            return HTTPResponse(status: 304, contentType: type, bytes: [], headers: headers)
        }
        return HTTPResponse(status: 200, contentType: type, bytes: bytes, headers: headers)
    }

    /// 404 for a name that is not (or no longer) there: not cached, as it may be a segment that is yet to come.
    private static func gone(_ request: HTTPRequestHead.Request, _ stream: HLSStream, now: Double) -> HTTPResponse {
        stream.notFound.add(1, ordering: .relaxed)
        return finish(
            uncached(text(404, "no such segment (it left the window, or is not made yet)\n")), request, now: now)
    }

    /// `Cache-Control: no-cache` instead of what the response had.
    private static func uncached(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.removeAll { $0.0 == "Cache-Control" }
        response.headers.append(("Cache-Control", "no-cache"))
        return response
    }

    private static func finish(_ response: HTTPResponse, _ request: HTTPRequestHead.Request, now: Double)
        -> HTTPResponse
    {
        var response = response
        if !response.headers.contains(where: { $0.0 == "Access-Control-Allow-Origin" }) {
            response.headers.append(("Access-Control-Allow-Origin", "*"))
        }
        response.headers.append(("Date", httpDate(now)))
        response.omitsBody = request.method == "HEAD"
        response.keepAlive = wantsKeepAlive(request)
        return response
    }

    /// HTTP/1.1 keeps the connection unless the client says `close`; HTTP/1.0 only when it asks for `keep-alive`.
    package static func wantsKeepAlive(_ request: HTTPRequestHead.Request) -> Bool {
        let connection = request.field("connection")?.lowercased() ?? ""
        if request.version == "HTTP/1.1" { return !connection.contains("close") }
        return connection.contains("keep-alive")
    }

    /// The station's outputs that have an HLS stream, as the multivariant playlist lists them (URIs relative to
    /// `mount`'s directory).
    static func variants(of mount: PublicDirectory.Mount, in directory: PublicDirectory) -> [HLSPlaylist.Variant] {
        directory.mounts.compactMap { other in
            guard other.station == mount.station, let stream = other.hls else { return nil }
            let snapshot = stream.snapshot
            // Before its first segments: the encoder's bitrate and 10 % for the container.
            let configured = other.bitrate > 0 ? other.bitrate + other.bitrate / 10 : 0
            return HLSPlaylist.Variant(
                uri: "../" + other.hlsDirectory.dropFirst() + "live.m3u8",
                bandwidth: snapshot.peakBandwidth > 0 ? snapshot.peakBandwidth : configured,
                averageBandwidth: snapshot.averageBandwidth > 0 ? snapshot.averageBandwidth : configured,
                channels: snapshot.segments.isEmpty ? other.channels : snapshot.channels,
                name: other.rendition ?? other.station)
        }
    }

    /// An HTTP date (RFC 9110 §5.6.7): `Wed, 02 Dec 2026 13:45:00 GMT`.
    package static func httpDate(_ seconds: Double) -> String { UTCTime(seconds).httpDate }
}
