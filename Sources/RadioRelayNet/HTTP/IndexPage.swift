import RadioRelayMedia
import RadioRelaySystem

/// The public address's `/`: the station page. One section per station — its name, description, genre and link,
/// the title now and listeners now, the DJ on the air (a DJ account's live source), one `<audio>` player offering the formats the browser may choose from (Ogg
/// Opus, the MP3 pass-through, HLS where the browser plays it natively), the playlists, and the last titles with
/// their times. One event stream for the whole page (`/events`) keeps the titles current, and a title change
/// fetches that station's `/NAME/history.json`; that is all the script does. No external assets: the stylesheet and
/// the script are files of the page's own (a Content-Security-Policy allows nothing inline); labelled for screen
/// readers and the keyboard; one column on a phone. Every string from an upstream, a source or the configuration is
/// escaped by `Markup.escape`.
package enum IndexPage {
    /// The page-wide event stream's path: one `title` event whose data is `{"STATION":"TITLE",…}`.
    package static let eventsPath = "/events"

    /// A station as the page shows it: its mounts in the directory's order (the main output first).
    struct StationView {
        var name: String
        var mounts: [PublicDirectory.Mount]
    }

    static func stations(_ directory: PublicDirectory) -> [StationView] {
        var views: [StationView] = []
        for mount in directory.mounts {
            if let index = views.firstIndex(where: { $0.name == mount.station }) {
                views[index].mounts.append(mount)
            } else {
                views.append(StationView(name: mount.station, mounts: [mount]))
            }
        }
        return views
    }

    /// Each station's title now, as the page's event stream sends it: `{"main":"Song","jazz":""}`.
    package static func titles(_ directory: PublicDirectory) -> String {
        JSONText.object(stations(directory).map { ($0.name, JSONText.string($0.mounts.first?.title ?? "")) })
    }

    /// The page's stylesheet and script: files of their own, so that its Content-Security-Policy allows nothing
    /// inline (`contentSecurityPolicy`): markup that escaped its escaping still could not run.
    package static let stylePath = "/station-page.css"
    package static let scriptPath = "/station-page.js"
    /// Sent with the page: its own origin's files and streams only, nothing inline, no plugins, no forms, no `<base>`.
    package static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; base-uri 'none'; "
        + "form-action 'none'"

    package static func html(_ directory: PublicDirectory, now: Double = wallClockNow()) -> String {
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>radio-relay</title>
            <link rel="stylesheet" href="\(stylePath)">
            <script src="\(scriptPath)" defer></script>
            </head><body>
            <header><h1>radio-relay</h1></header>
            <main>

            """
        let views = stations(directory)
        if views.isEmpty { page += "<p>No stations.</p>\n" }
        for view in views {
            page += section(
                view, history: directory.histories[view.name] ?? SongHistory(), archive: directory.archives[view.name],
                now: now)
        }
        page += """
            </main>
            <footer class="small"><p>Times are UTC. <a href="/status-json.xsl">Status (Icecast JSON)</a></p></footer>
            </body></html>

            """
        return page
    }

    /// The page's stylesheet: light and dark, one column on a phone.
    package static let style = """
        :root{color-scheme:light dark;--muted:#5f6368;--line:#d0d4d9;--accent:#0b57d0}
        @media (prefers-color-scheme:dark){:root{--muted:#b0b4b9;--line:#3c4043;--accent:#8ab4f8}}
        body{font-family:system-ui,sans-serif;line-height:1.45;max-width:46rem;margin:0 auto;padding:1rem}
        header h1{font-size:1.4rem;margin:.5rem 0 1rem}
        section{border:1px solid var(--line);border-radius:.6rem;padding:1rem 1.1rem;margin:0 0 1.2rem}
        h2{font-size:1.25rem;margin:0 0 .3rem}.meta,.small{color:var(--muted);font-size:.9rem;margin:.2rem 0}
        .now{font-size:1.05rem;margin:.6rem 0}.now strong{font-weight:600}
        audio{width:100%;margin:.4rem 0}a{color:var(--accent)}
        a:focus,audio:focus{outline:3px solid var(--accent);outline-offset:2px}
        ol.history{list-style:none;padding:0;margin:.3rem 0 0;max-height:14rem;overflow:auto}
        ol.history li{display:flex;gap:.8rem;padding:.15rem 0;border-top:1px solid var(--line)}
        ol.history time{color:var(--muted);font-variant-numeric:tabular-nums;flex:0 0 auto}
        details summary{cursor:pointer;color:var(--muted)}ol.history .dj{color:var(--muted);margin-left:auto}
        """

    /// The page's script: titles from the page's one event stream; a change also refreshes that station's history.
    package static let script = """
        const render = (name, history) => {
          const list = document.getElementById("history-" + name);
          if (!list) return;
          list.replaceChildren(...history.map((entry) => {
            const item = document.createElement("li");
            const time = document.createElement("time");
            time.dateTime = entry.started;
            time.textContent = entry.started.slice(11, 16);
            const title = document.createElement("span");
            title.textContent = entry.title;
            item.append(time, title);
            if (entry.dj) {
              const dj = document.createElement("span");
              dj.className = "dj";
              dj.textContent = entry.dj;
              item.append(dj);
            }
            if (typeof entry.listen === "string" && entry.listen.startsWith("/")) {
              const again = document.createElement("a");
              again.className = "again";
              again.href = entry.listen;
              again.textContent = "listen again";
              item.append(again);
            }
            return item;
          }));
        };
        if (window.EventSource) {
          const source = new EventSource("\(eventsPath)");
          source.addEventListener("title", (event) => {
            for (const [name, title] of Object.entries(JSON.parse(event.data))) {
              const now = document.getElementById("title-" + name);
              if (!now || now.textContent === (title || "–")) continue;
              now.textContent = title || "–";
              fetch("/" + name + "/history.json").then((r) => r.json()).then((h) => render(name, h.history))
                .catch(() => {});
            }
          });
        }
        """

    private static func section(
        _ view: StationView, history: SongHistory, archive: ArchiveShelf?, now: Double
    ) -> String {
        let range = archive?.service.index().range
        /// The archive's URL that plays from `seconds` (Unix time), when it holds that moment.
        func again(_ seconds: Double) -> String? {
            let millis = Int64(seconds * 1000)
            guard let archive, let range, range.contains(millis) else { return nil }
            return ArchiveListing.listen(archive.mount, from: millis)
        }
        guard let main = view.mounts.first else { return "" }
        let info = main.info
        let name = Markup.escape(info.displayName ?? view.name)
        let id = Markup.escape(view.name)
        var html = "<section aria-labelledby=\"name-\(id)\"><h2 id=\"name-\(id)\">\(name)</h2>\n"
        var meta: [String] = []
        if let genre = info.genre, !genre.isEmpty { meta.append(Markup.escape(genre)) }
        let listeners = view.mounts.reduce(0) { $0 + $1.listeners + ($1.hls?.playerCount() ?? 0) }
        meta.append("\(listeners) listening now")
        html += "<p class=\"meta\">\(meta.joined(separator: " · "))</p>\n"
        if let description = info.description, !description.isEmpty { html += "<p>\(Markup.escape(description))</p>\n" }
        if let url = info.url, url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://") {
            html +=
                "<p class=\"small\"><a href=\"\(Markup.escape(url))\" rel=\"noopener\">\(Markup.escape(url))</a></p>\n"
        }
        html += "<p class=\"now\">Now playing: <strong id=\"title-\(id)\" aria-live=\"polite\">"
        html += "\(Markup.escape(main.title.flatMap { $0.isEmpty ? nil : $0 } ?? "–"))</strong></p>\n"
        if let current = history.entries.last, current.title == main.title, let url = again(current.started) {
            html +=
                "<p class=\"small\"><a class=\"again\" href=\"\(Markup.escape(url))\">Hear this song from its start</a></p>\n"
        }
        if let dj = main.dj { html += "<p class=\"now\">On the air: <strong>\(Markup.escape(dj))</strong></p>\n" }
        // One player: the browser takes the first source it can play.
        let mp3 = view.mounts.first { $0.format == .mp3 }
        html += "<audio controls preload=\"none\" aria-label=\"Listen to \(name)\">\n"
        html += "<source src=\"\(Markup.escape(main.path))\" type=\"audio/ogg; codecs=opus\">\n"
        if let mp3 { html += "<source src=\"\(Markup.escape(mp3.path))\" type=\"audio/mpeg\">\n" }
        if main.hls != nil {
            html +=
                "<source src=\"\(Markup.escape(main.hlsDirectory))live.m3u8\" type=\"application/vnd.apple.mpegurl\">\n"
        }
        html += "Your browser plays none of these: use a playlist below.</audio>\n"
        html += "<p class=\"small\">Playlists: "
        html += view.mounts.map { mount in
            let label = mount.format == .mp3 ? "MP3" : mount.rendition.map { "Opus \($0)" } ?? "Opus"
            return "\(label) "
                + Playlists.Kind.allCases.map { kind in
                    "<a href=\"\(Markup.escape(mount.path)).\(kind.rawValue)\">.\(kind.rawValue)</a>"
                }.joined(separator: " ")
        }.joined(separator: " · ")
        if main.hls != nil { html += " · HLS <a href=\"\(Markup.escape(main.hlsDirectory))live.m3u8\">live.m3u8</a>" }
        html += "</p>\n"
        html += "<details open><summary>Recently played</summary>\n<ol class=\"history\" id=\"history-\(id)\">\n"
        for entry in history.entries.reversed() {
            let started = UTCTime(entry.started).iso8601
            html += "<li><time datetime=\"\(started)\">\(started.dropFirst(11).prefix(5))</time>"
            html += "<span>\(Markup.escape(entry.title))</span>"
            if let dj = entry.dj { html += "<span class=\"dj\">\(Markup.escape(dj))</span>" }
            if let url = again(entry.started) {
                html += "<a class=\"again\" href=\"\(Markup.escape(url))\">listen again</a>"
            }
            html += "</li>\n"
        }
        html += "</ol></details>\n"
        if let archive, let range {
            let shows = ArchiveListing.shows(archive.service.titles(), range: range)
            if !shows.isEmpty {
                html += "<details open><summary>Listen again</summary>\n<ol class=\"history\">\n"
                for show in shows {
                    let started = ArchiveListing.iso(show.start)
                    html += "<li><time datetime=\"\(started)\">\(started.dropFirst(11).prefix(5))</time>"
                    html += "<a href=\"\(Markup.escape(ArchiveListing.listen(archive.mount, from: show.start)))\">"
                    html += "\(Markup.escape(show.dj))</a></li>\n"
                }
                html += "</ol></details>\n"
            }
        }
        html += "</section>\n"
        return html
    }

}
