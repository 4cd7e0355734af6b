import RadioRelayMedia
import RadioRelaySystem

/// The admin page at `/admin/`, as a pure function of a `View` (tests: `AdminPageTests`): per station its inputs
/// (force, release), its live source (kill, set the title), the listeners of each mount (ID, address, user agent,
/// seconds connected; kick, move to another mount), the last switches and titles. Server-side HTML and plain `POST`
/// forms, each carrying the session's form token (`AdminSessions`); no script, no external asset (the stylesheet is
/// inline, allowed by a nonce of the response's own: `contentSecurityPolicy`). Every string from a peer, a source or
/// the configuration goes through `Markup.escape`. At most `listedPerMount` listeners are listed per mount, with a
/// count of the rest, so a mount of 19 000 listeners does not make a page of megabytes. One column on a phone.
package enum AdminPage {
    package static let path = "/admin/"
    /// Listeners listed per mount at most (the oldest first).
    package static let listedPerMount = 200

    /// A mount and its listeners as listed.
    package struct MountListeners: Sendable {
        package var mount: PublicDirectory.Mount
        /// The oldest first, at most `listedPerMount`.
        package var listeners: [ListenerEntry]
        /// All of them (stream listeners and HLS players).
        package var total: Int

        package init(mount: PublicDirectory.Mount, listeners: [ListenerEntry], total: Int) {
            self.mount = mount
            self.listeners = listeners
            self.total = total
        }
    }

    /// What the page is made from.
    package struct View: Sendable {
        package var stations: [AdminStationView]
        /// Every mount of the server (the move forms' destinations), with its listeners.
        package var mounts: [MountListeners]
        package var histories: [String: SongHistory]
        /// The session's form token.
        package var token: String
        /// What the last form did.
        package var flash: String?
        /// Monotonic seconds (the listeners' clock).
        package var now: Double

        package init(
            stations: [AdminStationView], mounts: [MountListeners], histories: [String: SongHistory] = [:],
            token: String, flash: String? = nil, now: Double
        ) {
            self.stations = stations
            self.mounts = mounts
            self.histories = histories
            self.token = token
            self.flash = flash
            self.now = now
        }
    }

    /// Sent with the page: nothing from anywhere, the inline stylesheet by its nonce, forms to this origin only, no
    /// framing (a page elsewhere cannot lay the admin's buttons under its own).
    package static func contentSecurityPolicy(nonce: String) -> String {
        "default-src 'none'; style-src 'nonce-\(nonce)'; form-action 'self'; frame-ancestors 'none'; "
            + "base-uri 'none'"
    }

    package static func html(_ view: View, nonce: String) -> String {
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>radio-relay admin</title>
            <style nonce="\(Markup.escape(nonce))">\(style)</style>
            </head><body>
            <header><h1>radio-relay admin</h1>
            <nav aria-label="Stations"><ul>
            """
        for station in view.stations {
            page += "<li><a href=\"#station-\(Markup.escape(station.name))\">\(Markup.escape(station.name))</a></li>"
        }
        page += "<li><a href=\"\(path)\">Refresh</a></li></ul></nav></header>\n<main>\n"
        if let flash = view.flash {
            page += "<p class=\"flash\" role=\"status\">\(Markup.escape(flash))</p>\n"
        }
        if view.stations.isEmpty { page += "<p>No stations.</p>\n" }
        for station in view.stations { page += section(station, view) }
        page += """
            </main>
            <footer><p>Times are UTC. Listeners: at most \(listedPerMount) listed per mount, the longest connected \
            first. <a href="/admin/stats">Icecast stats</a></p></footer>
            </body></html>

            """
        return page
    }

    private static func section(_ station: AdminStationView, _ view: View) -> String {
        let name = Markup.escape(station.name)
        var html = "<section id=\"station-\(name)\" aria-labelledby=\"heading-\(name)\">\n"
        html += "<h2 id=\"heading-\(name)\">Station \(name)</h2>\n"
        let mounts = view.mounts.filter { $0.mount.station == station.name }
        html += inputs(station, token: view.token)
        if station.takesSources, let main = mounts.first?.mount {
            html += liveSource(station, mount: main.path, token: view.token)
        }
        html += "<h3>Listeners</h3>\n"
        let destinations = view.mounts.map(\.mount.path)
        for mount in mounts { html += listeners(mount, destinations: destinations, view) }
        html += switches(station)
        html += titles(view.histories[station.name] ?? SongHistory())
        html += "</section>\n"
        return html
    }

    // MARK: Pieces

    /// A `POST` form to the page: the token, the fields (hidden), then `controls` and a button.
    static func form(
        _ fields: [(String, String)], token: String, button: String, label: String, controls: String = "",
        danger: Bool = false
    ) -> String {
        var html = "<form method=\"post\" action=\"\(path)\">"
        html += "<input type=\"hidden\" name=\"token\" value=\"\(Markup.escape(token))\">"
        for (name, value) in fields {
            html += "<input type=\"hidden\" name=\"\(name)\" value=\"\(Markup.escape(value))\">"
        }
        html += controls
        html += "<button type=\"submit\"\(danger ? " class=\"danger\"" : "") aria-label=\"\(Markup.escape(label))\">"
        html += "\(button)</button></form>"
        return html
    }

    /// `HH:MM:SS` of a wall-clock time, in a `<time>` with the whole date.
    static func time(_ seconds: Double) -> String {
        let iso = UTCTime(seconds).iso8601
        return "<time datetime=\"\(iso)\">\(iso.dropFirst(11).prefix(8))</time>"
    }

    /// Whole seconds of a span: 0 for a negative or non-finite one.
    static func seconds(_ span: Double) -> Int { max(0, Int(exactly: span.rounded(.down)) ?? 0) }

    /// `42 s`, `3 min 5 s`, `2 h 07 min`.
    static func duration(_ seconds: Int) -> String {
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min \(seconds % 60) s" }
        let minutes = (seconds % 3600) / 60
        return "\(seconds / 3600) h \(minutes < 10 ? "0" : "")\(minutes) min"
    }

    /// A table's opening: its caption (for screen readers and the eye) and its column headers.
    static func table(_ caption: String, columns: [String], classes: String = "") -> String {
        var html = "<div class=\"scroll\"><table\(classes.isEmpty ? "" : " class=\"\(classes)\"")>"
        html += "<caption>\(caption)</caption><thead><tr>"
        for column in columns { html += "<th scope=\"col\">\(column)</th>" }
        return html + "</tr></thead><tbody>\n"
    }

    static let tableEnd = "</tbody></table></div>\n"
}
