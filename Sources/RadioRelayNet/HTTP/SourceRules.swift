import RadioRelayMedia
import RadioRelaySystem

/// The source protocol's answers as pure functions of the request (tests: `SourceRulesTests`): what an accepted
/// source is sent, what refuses one before its audio is read, and the admin calls a source makes, in Icecast's
/// words and XML.
///
/// | request | answer |
/// |---|---|
/// | `PUT /PATH` with `Expect: 100-continue` | `HTTP/1.1 100 Continue`, then the audio is read until the close |
/// | `PUT /PATH` without | `HTTP/1.1 200 OK`, then the same |
/// | `SOURCE /PATH` | `HTTP/1.0 200 OK`, then the same |
/// | no `Authorization` | 401 with `WWW-Authenticate: Basic` (libshout asks this way first) |
/// | wrong credentials | 401, counted: the 11th within a minute from one address is 429 (`SourceGate`'s keys) |
/// | a DJ of other stations, outside the account's hours, a bar | 403 with the reason (`SourceGate`) |
/// | a source while one is on the air | 403 `Mountpoint in use` |
/// | `Content-Type` of a format not decoded here (AAC, FLAC, Vorbis, WAV, WebM) | 415 with the reason |
/// | `Transfer-Encoding` | 501: the audio comes unframed, as Icecast 2.4 takes it |
/// | `GET /admin/metadata?mount=/PATH&mode=updinfo&song=TITLE` | the title while the source plays (XML) |
/// | `GET /admin/killsource?mount=/PATH` | the source is ended, the station hands back (XML) |
package enum SourceRules {
    static let realm = "Icecast2 Server"

    /// The answer to a source's credentials that are missing or wrong.
    package static func unauthorized() -> HTTPResponse {
        var response = PublicRouter.text(401, "You need to authenticate\n")
        response.headers.append(("WWW-Authenticate", "Basic realm=\"\(realm)\""))
        return response
    }

    /// What refuses a source before its audio is read: a body framing it does not use, a format not decoded here.
    package static func refusal(_ request: HTTPRequestHead.Request) -> HTTPResponse? {
        if request.field("transfer-encoding") != nil {
            return PublicRouter.text(
                501, "a source's audio is taken unframed (no Transfer-Encoding), as Icecast 2.4 takes it\n")
        }
        let type = (request.field("content-type") ?? "").lowercased()
        for (word, name) in [
            ("aac", "AAC"), ("flac", "FLAC"), ("vorbis", "Ogg Vorbis"), ("wav", "WAV"), ("webm", "WebM"),
            ("matroska", "Matroska"),
        ] where type.contains(word) {
            return PublicRouter.text(
                415, "\(name) (\(Sanitized.text(type, limit: 64))) is not decoded here: send MP3 or Ogg Opus\n")
        }
        return nil
    }

    /// The source's own description, as status and the station's `icy-*` headers show it (printable, bounded).
    package static func describe(_ request: HTTPRequestHead.Request) -> LiveSource.Request {
        var described = LiveSource.Request(method: request.method, path: Sanitized.text(request.path, limit: 128))
        func shown(_ name: String) -> String? {
            guard let value = request.field(name) else { return nil }
            let text = Redaction.text(Sanitized.text(value, limit: Sanitized.headerLimit))
            return text.isEmpty ? nil : text
        }
        described.userAgent = shown("user-agent")
        described.info.displayName = shown("ice-name")
        described.info.description = shown("ice-description")
        described.info.genre = shown("ice-genre")
        described.info.url = shown("ice-url")
        return described
    }

    /// What an accepted source is sent before its audio is read.
    package static func acceptance(_ request: HTTPRequestHead.Request, continues: Bool) -> [UInt8] {
        if continues { return Array("HTTP/1.1 100 Continue\r\n\r\n".utf8) }
        let version = request.method == "PUT" ? "HTTP/1.1" : "HTTP/1.0"
        return Array("\(version) 200 OK\r\nServer: radio-relay/\(RadioRelayVersion.string)\r\n\r\n".utf8)
    }

    // MARK: Admin calls

    /// The mount an admin call names (`mount=/NAME`).
    package static func mount(of request: HTTPRequestHead.Request) -> String? { mount(inQuery: request.query) }

    /// The `mount=` of a query (a path, `/` added when it lacks one).
    package static func mount(inQuery query: String?) -> String? {
        textParameters(query)["mount"].map { $0.hasPrefix("/") ? $0 : "/" + $0 }
    }

    /// What an admin call asks: an answer now, or a command for the station whose outcome is answered.
    package enum AdminAction {
        case respond(HTTPResponse)
        case command(StationCommand)
    }

    /// An admin call with the source's credentials: `/admin/metadata` (answered here) or `/admin/killsource` (a
    /// command for the station's pipeline, answered by `killAnswer`).
    package static func admin(_ request: HTTPRequestHead.Request, desk: SourceDesk) -> AdminAction {
        admin(method: request.method, path: request.path, parameters: parameters(request.query), desk: desk)
    }

    /// The same with the call's parameters given (a query's, or the admin page's form).
    package static func admin(
        method: String, path: String, parameters: [String: [UInt8]], desk: SourceDesk
    ) -> AdminAction {
        guard method == "GET" || method == "POST" else {
            var response = PublicRouter.text(405, "only GET\n")
            response.headers.append(("Allow", "GET"))
            return .respond(response)
        }
        switch path {
        case "/admin/metadata":
            guard parameters["mode"] == Array("updinfo".utf8) else {
                return .respond(adminAnswer(400, "No such action"))
            }
            guard let title = title(parameters) else { return .respond(adminAnswer(400, "No metadata")) }
            return .respond(
                desk.setTitle(title)
                    ? adminAnswer(200, "Metadata update successful") : adminAnswer(400, "Source does not exist"))
        case "/admin/killsource":
            return .command(.killSource)
        default:
            return .respond(adminAnswer(404, "Unknown admin command: this server takes metadata and killsource"))
        }
    }

    /// Icecast's answer to `killsource` once the station answered (nil: it did not in time).
    package static func killAnswer(_ outcome: CommandOutcome?) -> HTTPResponse {
        switch outcome {
        case .done: adminAnswer(200, "Source Removed")
        case .refused: adminAnswer(400, "Source does not exist")
        case nil: adminAnswer(503, "The station did not answer: try again")
        }
    }

    /// The title an `updinfo` carries: `song`, else `artist - title` (either alone), as printable text; `charset`
    /// other than UTF-8 is taken as ISO-8859-1 (libshout's and older clients' other choice).
    package static func title(_ parameters: [String: [UInt8]]) -> String? {
        let charset = parameters["charset"].map { String(decoding: $0, as: UTF8.self).lowercased() } ?? "utf-8"
        let latin1 = !(charset == "utf-8" || charset == "utf8")
        func text(_ name: String) -> String? {
            guard let bytes = parameters[name], !bytes.isEmpty else { return nil }
            let decoded =
                latin1
                ? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
                : String(decoding: bytes, as: UTF8.self)
            let clean = Sanitized.text(decoded, limit: Sanitized.titleLimit)
            return clean.isEmpty ? nil : clean
        }
        if let song = text("song") { return song }
        switch (text("artist"), text("title")) {
        case (let artist?, let title?): return "\(artist) - \(title)"
        case (let artist?, nil): return artist
        case (nil, let title?): return title
        case (nil, nil): return nil
        }
    }

    /// Icecast's XML answer to an admin call.
    package static func adminAnswer(_ status: Int, _ message: String) -> HTTPResponse {
        let body =
            "<?xml version=\"1.0\"?>\n<iceresponse><message>\(Markup.escape(message))</message>"
            + "<return>\(status == 200 ? 1 : 0)</return></iceresponse>\n"
        var response = HTTPResponse(status: status, contentType: "text/xml; charset=utf-8", body: body)
        response.headers.append(("Access-Control-Allow-Origin", "*"))
        response.summary = message
        return response
    }

    /// A query's parameters, percent-decoded (`+` is a space), the first of each name; at most 32 of them.
    package static func parameters(_ query: String?) -> [String: [UInt8]] {
        guard let query else { return [:] }
        return parameters(bytes: query.utf8)
    }

    /// `application/x-www-form-urlencoded` bytes (a query, or the admin page's form body), read by bytes: the
    /// parameters, percent-decoded (`+` is a space), the first of each name; at most 32 of them.
    package static func parameters(bytes: some Collection<UInt8>) -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for pair in bytes.split(separator: UInt8(ascii: "&")).prefix(32) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(decoding: percentDecoded(parts[0]), as: UTF8.self).lowercased()
            guard result[name] == nil else { continue }
            result[name] = parts.count > 1 ? percentDecoded(parts[1]) : []
        }
        return result
    }

    private static func textParameters(_ query: String?) -> [String: String] {
        parameters(query).mapValues { String(decoding: $0, as: UTF8.self) }
    }

    static func percentDecoded(_ bytes: some Collection<UInt8>) -> [UInt8] {
        PercentEncoding.decode(bytes, strict: false, plusIsSpace: true) ?? []
    }
}
