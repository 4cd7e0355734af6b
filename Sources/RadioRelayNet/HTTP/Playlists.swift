import RadioRelayMedia
import RadioRelaySystem

/// A playlist for every mount, as Icecast names them — the mount and a suffix: `/main.opus.m3u` (M3U with
/// `#EXTINF`), `/main.opus.pls` (PLS version 2), `/main.opus.xspf` (XSPF 1, as Icecast's) — for players, directories
/// and hardware radios that take a playlist link. The URL inside is absolute: from `public_url`, else the request's
/// `Host` when it is a plain host[:port], else the front end's address.
package enum Playlists {
    package enum Kind: String, CaseIterable, Sendable {
        case m3u
        case pls
        case xspf

        var contentType: String {
            switch self {
            case .m3u: "audio/x-mpegurl"
            case .pls: "audio/x-scpls"
            case .xspf: "application/xspf+xml"
            }
        }
    }

    /// The suffixes a mount may not end in (the configuration refuses them).
    package static let suffixes = Kind.allCases.map { "." + $0.rawValue }

    /// The mount (its index) and kind of playlist `path` asks for.
    package static func playlist(at path: String, in directory: PublicDirectory) -> (mount: Int, kind: Kind)? {
        for kind in Kind.allCases where path.hasSuffix("." + kind.rawValue) {
            let mount = String(path.dropLast(kind.rawValue.utf8.count + 1))
            if let index = directory.mount(at: mount) { return (index, kind) }
        }
        return nil
    }

    /// Where listeners reach this address: `public_url`, else `http://` and the request's plain `Host`, else
    /// `fallbackHost`.
    package static func base(_ request: HTTPRequestHead.Request, directory: PublicDirectory, fallbackHost: String)
        -> String
    {
        directory.publicURL?.base ?? "http://" + (IcecastStatus.host(request.host) ?? fallbackHost)
    }

    package static func response(
        _ kind: Kind, mount: PublicDirectory.Mount, base: String, head: Bool
    ) -> HTTPResponse {
        let url = base + mount.path
        let name = Sanitized.text(mount.info.displayName ?? mount.station, limit: Sanitized.headerLimit)
        let body: String
        switch kind {
        case .m3u:
            body = "#EXTM3U\n#EXTINF:-1,\(name)\n\(url)\n"
        case .pls:
            body = "[playlist]\nNumberOfEntries=1\nFile1=\(url)\nTitle1=\(name)\nLength1=-1\nVersion=2\n"
        case .xspf:
            var annotation = "Stream Title: \(name)"
            if let description = mount.info.description, !description.isEmpty {
                annotation += "\nStream Description: \(Sanitized.text(description, limit: Sanitized.headerLimit))"
            }
            if let genre = mount.info.genre, !genre.isEmpty {
                annotation += "\nStream Genre: \(Sanitized.text(genre, limit: Sanitized.headerLimit))"
            }
            let info = mount.info.url.map {
                "      <info>\(Markup.escape(Sanitized.text($0, limit: Sanitized.headerLimit)))</info>\n"
            }
            body = """
                <?xml version="1.0" encoding="UTF-8"?>
                <playlist xmlns="http://xspf.org/ns/0/" version="1">
                  <title>\(Markup.escape(name))</title>
                  <creator>radio-relay</creator>
                  <trackList>
                    <track>
                      <location>\(Markup.escape(url))</location>
                      <title>\(Markup.escape(name))</title>
                      <annotation>\(Markup.escape(annotation))</annotation>
                \(info ?? "")    </track>
                  </trackList>
                </playlist>

                """
        }
        var response = HTTPResponse(
            status: 200, contentType: kind.contentType, bytes: Array(body.utf8),
            headers: [("Access-Control-Allow-Origin", "*"), ("Cache-Control", "public, max-age=60"), ("Vary", "Host")])
        response.omitsBody = head
        return response
    }
}
