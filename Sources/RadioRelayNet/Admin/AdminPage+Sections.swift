import RadioRelayMedia
import RadioRelaySystem

/// The parts of a station's section on the admin page: inputs, live source, listeners, switches, titles.
extension AdminPage {
    static func inputs(_ station: AdminStationView, token: String) -> String {
        guard !station.inputs.isEmpty else { return "" }
        var html = "<h3>Inputs</h3>\n"
        if let forced = station.forced {
            html += "<p>Forced to <strong>\(Markup.escape(forced))</strong> until released or until it fails.</p>\n"
        }
        html += table(
            "Inputs of \(Markup.escape(station.name)), in priority order",
            columns: ["Input", "Kind", "State", "Since", "Title", "Action"], classes: "stack")
        for input in station.inputs {
            let name = Markup.escape(input.name)
            var state = Markup.escape(input.state)
            if input.name == station.forced { state += " (forced)" }
            if let reason = input.reason, !reason.isEmpty { state += "<br><small>\(Markup.escape(reason))</small>" }
            html += "<tr><th scope=\"row\" data-label=\"Input\">\(name)</th>"
            html += "<td data-label=\"Kind\">\(Markup.escape(input.kind))</td>"
            html += "<td data-label=\"State\">\(state)</td><td data-label=\"Since\">\(time(input.since))</td>"
            html +=
                "<td data-label=\"Title\">\(Markup.escape(input.title.flatMap { $0.isEmpty ? nil : $0 } ?? "–"))</td><td>"
            if input.name == station.forced {
                html += form(
                    [("action", "release"), ("station", station.name)], token: token, button: "Release",
                    label: "Release the force of input \(input.name)")
            } else {
                html += form(
                    [("action", "force"), ("station", station.name), ("input", input.name)], token: token,
                    button: "Force", label: "Force input \(input.name) of \(station.name)")
            }
            html += "</td></tr>\n"
        }
        return html + tableEnd
    }

    static func liveSource(_ station: AdminStationView, mount: String, token: String) -> String {
        var html = "<h3>Live source</h3>\n"
        guard let source = station.source else { return html + "<p>No live source on the air.</p>\n" }
        html += "<dl class=\"facts\"><dt>Address</dt><dd>\(Markup.escape(source.address))</dd>"
        html += "<dt>User agent</dt><dd>\(Markup.escape(source.userAgent ?? "–"))</dd>"
        html += "<dt>Connected since</dt><dd>\(time(source.since))</dd></dl>\n<div class=\"actions\">"
        let field = "title-\(Markup.escape(station.name))"
        html += form(
            [("action", "metadata"), ("mount", mount), ("mode", "updinfo")], token: token, button: "Set title",
            label: "Set the title of \(station.name)",
            controls: "<label for=\"\(field)\">Title</label>"
                + "<input id=\"\(field)\" name=\"song\" type=\"text\" maxlength=\"1024\" required>")
        html += form(
            [("action", "killsource"), ("mount", mount)], token: token, button: "Kill source",
            label: "End the live source of \(station.name)", danger: true)
        return html + "</div>\n"
    }

    static func listeners(_ listing: MountListeners, destinations: [String], _ view: View) -> String {
        let path = listing.mount.path
        let count = listing.total == 1 ? "1 listener" : "\(listing.total) listeners"
        var html = "<h4>\(Markup.escape(path)) <small>\(count)</small></h4>\n"
        guard !listing.listeners.isEmpty else { return html + "<p>No one listening.</p>\n" }
        let others = destinations.filter { $0 != path }
        html += table(
            "Listeners of \(Markup.escape(path)), the longest connected first",
            columns: ["ID", "Address", "User agent", "Connected", "Actions"], classes: "stack listeners")
        for entry in listing.listeners {
            let id = String(entry.id.value)
            let connected = seconds(view.now - entry.connectedAt)
            html += "<tr><th scope=\"row\" data-label=\"ID\">\(id)</th>"
            html += "<td data-label=\"Address\">\(Markup.escape(entry.address))</td>"
            html += "<td data-label=\"User agent\" class=\"agent\">\(Markup.escape(entry.userAgent ?? "–"))</td>"
            html += "<td data-label=\"Connected\">\(duration(connected)) <small>(\(connected) s)</small></td>"
            html += "<td><div class=\"actions\">"
            html += form(
                [("action", "kill"), ("mount", path), ("id", id)], token: view.token, button: "Kick",
                label: "Kick listener \(id)", danger: true)
            if !others.isEmpty {
                let field = "move-\(id)"
                var select = "<label for=\"\(field)\">Move to</label><select id=\"\(field)\" name=\"destination\">"
                for other in others { select += "<option>\(Markup.escape(other))</option>" }
                html += form(
                    [("action", "move"), ("mount", path), ("id", id)], token: view.token, button: "Move",
                    label: "Move listener \(id)", controls: select + "</select>")
            }
            html += "</div></td></tr>\n"
        }
        html += tableEnd
        let rest = listing.total - listing.listeners.count
        if rest > 0 { html += "<p class=\"more\">and \(rest) more, not listed</p>\n" }
        return html
    }

    static func switches(_ station: AdminStationView) -> String {
        var html = "<h3>Last switches</h3>\n"
        guard !station.switches.isEmpty else { return html + "<p>No switch yet.</p>\n" }
        html += table(
            "Switches of \(Markup.escape(station.name)), the newest first", columns: ["Time", "From", "To", "Why"])
        for change in station.switches.reversed() {
            html += "<tr><td>\(time(change.at))</td><td>\(Markup.escape(change.from))</td>"
            html += "<td>\(Markup.escape(change.to))</td><td>\(Markup.escape(change.reason))</td></tr>\n"
        }
        return html + tableEnd
    }

    static func titles(_ history: SongHistory) -> String {
        var html = "<h3>Last titles</h3>\n"
        guard !history.entries.isEmpty else { return html + "<p>No title yet.</p>\n" }
        html += table("Titles, the newest first", columns: ["Time", "Title", "Input"])
        for entry in history.entries.reversed() {
            html += "<tr><td>\(time(entry.started))</td><td>\(Markup.escape(entry.title))</td>"
            html += "<td>\(Markup.escape(entry.input))</td></tr>\n"
        }
        return html + tableEnd
    }

    /// Light, with contrast of at least 4.5:1 for all text; on a narrow screen each table row becomes a card.
    static let style = """
        :root{color-scheme:light;--ink:#1f1f1f;--muted:#595e63;--line:#c4c7cc;--accent:#0b57d0;--danger:#b3261e}
        body{font-family:system-ui,sans-serif;color:var(--ink);background:#fff;line-height:1.4;margin:0 auto;\
        max-width:80rem;padding:.8rem}
        h1{font-size:1.4rem;margin:.3rem 0}h2{font-size:1.25rem;margin:0 0 .4rem}h3{font-size:1.05rem;margin:1rem 0 .3rem}
        h4{font-size:1rem;margin:.8rem 0 .3rem;word-break:break-all}small,.more,footer{color:var(--muted)}
        nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.3rem 1rem;padding:0;margin:.2rem 0 .8rem}
        a{color:var(--accent)}section{border:1px solid var(--line);border-radius:.5rem;padding:.8rem;margin:0 0 1rem}
        .flash{background:#e8f0fe;border-left:4px solid var(--accent);padding:.5rem .7rem}
        .scroll{overflow-x:auto}table{border-collapse:collapse;width:100%}caption{text-align:left;color:var(--muted)}
        th,td{text-align:left;vertical-align:top;padding:.3rem .4rem;border-top:1px solid var(--line)}
        td.agent{word-break:break-all;max-width:24rem}
        form{display:inline-flex;flex-wrap:wrap;gap:.3rem;align-items:center;margin:.1rem .3rem .1rem 0}
        .actions{display:flex;flex-wrap:wrap;gap:.3rem}
        button{font:inherit;min-height:2.2rem;padding:.2rem .8rem;border:0;border-radius:.3rem;background:var(--accent);\
        color:#fff;cursor:pointer}button.danger{background:var(--danger)}
        input,select{font:inherit;min-height:2rem;max-width:100%}
        :focus-visible{outline:3px solid var(--accent);outline-offset:2px}
        dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem .8rem;margin:.3rem 0}
        dl.facts dd{margin:0;word-break:break-all}
        @media (max-width:40rem){table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;\
        clip-path:inset(50%)}table.stack,table.stack tbody,table.stack tr,table.stack th,table.stack td{display:block}\
        table.stack caption{display:block}table.stack tr{border-top:2px solid var(--line);padding:.3rem 0}table.stack th,table.stack td{border:0;\
        padding:.15rem .2rem}table.stack [data-label]::before{content:attr(data-label) ": ";font-weight:600}\
        td.agent{max-width:none}}
        """
}
