import RadioRelayMedia
import RadioRelaySystem

/// `GET /status-json.xsl` on the HTTP address: the mounts as Icecast 2.4 describes them there, so that directory
/// listings, now-playing widgets and monitoring plugins written for Icecast read radio-relay too. A pure function of
/// the directory, the request's `Host` and the time.
///
/// `icestats` has Icecast's `admin`, `host`, `location`, `server_id`, `server_start` and `server_start_iso8601`, and
/// `source`: one object for one mount, an array for several, absent for none (as Icecast has it). Each source has
/// the members Icecast 2.4.4 gives an Ogg Opus source — `genre`, `listener_peak`, `listeners`, `listenurl`,
/// `server_description`, `server_name`, `server_type`, `server_url` (when set), `stream_start`,
/// `stream_start_iso8601`, `subtype` — with Icecast's defaults for what the station does not say ("various",
/// "Unspecified description"), and those its documentation lists for sources that send them: `title` (when there is
/// one), `bitrate` (kb/s) and `audio_info`; and ours, `dj`: the DJ account of the live source on the air (only then).
/// Public and readable across origins (CORS `*`), never cached.
package enum IcecastStatus {
    package static let path = "/status-json.xsl"
    /// What Icecast's own configuration ships for `<admin>` and `<location>`: radio-relay has no such settings.
    package static let admin = "icemaster@localhost"
    package static let location = "Earth"

    package static func response(_ request: HTTPRequestHead.Request, directory: PublicDirectory, fallbackHost: String)
        -> HTTPResponse
    {
        let host = Self.host(request.host) ?? fallbackHost
        var members: [(String, String)] = [
            ("admin", JSONText.string(admin)), ("host", JSONText.string(hostName(host))),
            ("location", JSONText.string(location)),
            ("server_id", JSONText.string("radio-relay \(RadioRelayVersion.string)")),
            ("server_start", JSONText.string(rfc822(directory.serverStart))),
            ("server_start_iso8601", JSONText.string(iso8601(directory.serverStart))),
        ]
        let base = Playlists.base(request, directory: directory, fallbackHost: fallbackHost)
        let sources = directory.mounts.map { source($0, base: base) }
        if sources.count == 1 {
            members.append(("source", sources[0]))
        } else if sources.count > 1 {
            members.append(("source", JSONText.array(sources)))
        }
        let body = JSONText.object([("icestats", JSONText.object(members))])
        var response = HTTPResponse(
            status: 200, contentType: "application/json; charset=UTF-8", bytes: Array(body.utf8),
            headers: [
                ("Cache-Control", "no-cache, no-store"), ("Pragma", "no-cache"), ("Access-Control-Allow-Origin", "*"),
            ])
        response.omitsBody = request.method == "HEAD"
        return response
    }

    /// - Parameter base: where listeners reach the mounts (`public_url`, else `http://` and the request's host).
    static func source(_ mount: PublicDirectory.Mount, base: String) -> String {
        IcecastField.json(sourceFields(mount, base: base))
    }

    /// A mount's members in Icecast's order (by name), as `/status-json.xsl` and `/admin/stats` show them.
    package static func sourceFields(_ mount: PublicDirectory.Mount, base: String) -> [IcecastField] {
        let info = mount.info
        let kbps = mount.bitrate / 1000
        var fields: [IcecastField] = [
            IcecastField("audio_info", "channels=\(mount.channels);samplerate=\(mount.sampleRate);bitrate=\(kbps)"),
            IcecastField("bitrate", kbps),
        ]
        // Ours (Icecast has none): the DJ on the air, only while a DJ account's source plays.
        if let dj = mount.dj { fields.append(IcecastField("dj", dj)) }
        fields += [
            IcecastField("genre", nonEmpty(info.genre) ?? "various"),
            IcecastField("listener_peak", mount.listenerPeak),
            IcecastField("listeners", mount.listeners),
            IcecastField("listenurl", base + mount.path),
            IcecastField("server_description", nonEmpty(info.description) ?? "Unspecified description"),
            IcecastField("server_name", nonEmpty(info.displayName) ?? mount.station),
            IcecastField("server_type", mount.format.contentType),
        ]
        if let url = nonEmpty(info.url) { fields.append(IcecastField("server_url", url)) }
        fields += [
            IcecastField("stream_start", rfc822(mount.streamStart)),
            IcecastField("stream_start_iso8601", iso8601(mount.streamStart)),
        ]
        // Icecast names the codec of an Ogg source; an MP3 source has no subtype.
        if mount.format == .oggOpus { fields.append(IcecastField("subtype", "Opus")) }
        if let title = nonEmpty(mount.title) { fields.append(IcecastField("title", title)) }
        return fields
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    /// The request's `Host` when it is a plain host name or address with an optional port (nothing else is echoed).
    static func host(_ field: String?) -> String? {
        guard let field, (1...255).contains(field.utf8.count) else { return nil }
        let allowed = field.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"),
                UInt8(ascii: "["), UInt8(ascii: "]"):
                return true
            default:
                return false
            }
        }
        return allowed ? field : nil
    }

    /// `host:port` → `host`; `[::1]:8000` → `::1`.
    package static func hostName(_ host: String) -> String {
        // An IPv6 literal without brackets has no port to strip.
        guard host.utf8.first == UInt8(ascii: "[") || host.utf8.filter({ $0 == UInt8(ascii: ":") }).count <= 1 else {
            return host
        }
        return HostPort.split(Substring(host)).map { String($0.host) } ?? host
    }

    /// `Wed, 02 Dec 2026 14:17:14 +0000`, as Icecast writes its dates.
    static func rfc822(_ seconds: Double) -> String {
        String(PublicRouter.httpDate(seconds).dropLast(4)) + " +0000"
    }

    /// `2026-12-02T14:17:14+0000`.
    static func iso8601(_ seconds: Double) -> String {
        String(HLSPlaylist.iso8601(seconds).prefix(19)) + "+0000"
    }
}
