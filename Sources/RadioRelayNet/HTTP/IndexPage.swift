import RadioRelayMedia
import RadioRelaySystem

/// The public address's `/`: a plain HTML page listing the mounts with their titles and an `<audio>` element each,
/// so a person can open it and listen. Every string that came from the upstream or the configuration is escaped.
package enum IndexPage {
    package static func html(_ directory: PublicDirectory) -> String {
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>radio-relay</title>
            <style>body{font-family:sans-serif;max-width:40em;margin:2em auto;padding:0 1em}
            section{margin:1.5em 0}audio{width:100%}.title{color:#555}</style>
            </head><body><h1>radio-relay</h1>

            """
        if directory.mounts.isEmpty { page += "<p>No stations.</p>\n" }
        for (index, mount) in directory.mounts.enumerated() {
            let name = mount.info.displayName ?? mount.station + (mount.rendition.map { " (\($0))" } ?? "")
            var details = [mount.path]
            if mount.bitrate > 0 { details.append("\(mount.bitrate / 1000) kb/s") }
            details.append(mount.channels == 1 ? "mono" : "stereo")
            if !mount.rawAddress.isEmpty { details.append("raw TCP \(mount.rawAddress)") }
            page += "<section id=\"m\(index)\"><h2>\(escape(name))</h2>\n"
            if let description = mount.info.description { page += "<p>\(escape(description))</p>\n" }
            page += "<p class=\"title\">Now playing: <span data-events=\"\(escape(mount.eventsPath))\">"
            page += "\(escape(mount.title ?? "–"))</span></p>\n"
            page += "<audio controls preload=\"none\" src=\"\(escape(mount.path))\"></audio>\n"
            page += "<p><small>\(escape(details.joined(separator: " · ")))</small></p></section>\n"
        }
        // Titles follow the events endpoint where the browser has EventSource; the page works without it.
        page += """
            <script>
            for (const span of document.querySelectorAll("span[data-events]")) {
              if (!window.EventSource) break;
              const source = new EventSource(span.dataset.events);
              source.addEventListener("title", (event) => { span.textContent = event.data || "–"; });
            }
            </script>
            </body></html>

            """
        return page
    }

    /// Text for HTML element content and double-quoted attribute values.
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
