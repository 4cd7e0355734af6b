import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `radio-relay status [--url URL] [--token-file FILE] [--config FILE] [--json]`: reads a running relay's status
/// endpoint and prints a table, or the JSON as it came; exits as a Nagios plugin does (Icinga, Nagios, monit and
/// the like read the exit status): 0 every station alive and on its first input, 1 one degraded, 2 one down or the
/// endpoint unreadable, 3 a usage error.
package struct StatusCommand: Sendable, Equatable {
    /// `--url`: `http://HOST:PORT` (a path, if any, is ignored) or `HOST:PORT`; nil: from the config.
    package var url: String?
    /// `--token-file`: a file whose first line is the status token (`status_token`).
    package var tokenFile: String?
    /// `--config`: the config file whose `[server] status` address to read (default: `defaultConfig`, if readable).
    package var config: String?
    package var json = false

    package static let defaultConfig = "/etc/radio-relay/radio-relay.conf"
    package static let defaultAddress = (
        host: ServerSettings.defaultStatus.host, port: ServerSettings.defaultStatus.port
    )

    /// The Nagios plugin exit statuses.
    package enum Verdict: Int32, Sendable, Comparable {
        case ok = 0
        case degraded = 1
        case down = 2
        case unknown = 3

        package static func < (a: Verdict, b: Verdict) -> Bool { a.rawValue < b.rawValue }
        var word: String { ["OK", "WARNING", "CRITICAL", "UNKNOWN"][Int(rawValue)] }
    }

    package init() {}

    /// Runs the command: prints, and returns the exit status.
    package func run() -> Int32 {
        let endpoint: (host: String, port: Int)
        do {
            endpoint = try self.endpoint()
        } catch {
            StandardError.write("radio-relay status: \(error.message)\n")
            return Verdict.unknown.rawValue
        }
        var token: String?
        if let tokenFile {
            guard let bytes = try? SmallFile.read(tokenFile, limit: 4096),
                let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first
            else {
                StandardError.write("radio-relay status: cannot read the token from \(tokenFile)\n")
                return Verdict.unknown.rawValue
            }
            token = String(line).trimmingCharacters(in: .whitespaces)
        }
        let place = "http://\(endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host):\(endpoint.port)"
        let answer: (status: Int, body: [UInt8])
        do {
            answer = try StatusFetch.get(host: endpoint.host, port: endpoint.port, path: "/status.json", token: token)
        } catch {
            // Nothing named the address: say how to name one.
            let guessed = url == nil && config == nil && access(Self.defaultConfig, R_OK) != 0
            let hint = guessed ? " (the default address: name the server's with --url HOST:PORT or --config FILE)" : ""
            print("radio-relay CRITICAL: cannot read \(place)/status.json: \(error)\(hint)")
            return Verdict.down.rawValue
        }
        guard answer.status == 200 else {
            let reason = answer.status == 401 ? " (a status token is needed: --token-file)" : ""
            print("radio-relay CRITICAL: \(place)/status.json answered \(answer.status)\(reason)")
            return Verdict.down.rawValue
        }
        let snapshot: StatusSnapshot
        do {
            snapshot = try JSONDecoder().decode(StatusSnapshot.self, from: Data(answer.body))
        } catch {
            print(
                "radio-relay CRITICAL: \(place)/status.json is not the status JSON of this version (\(Self.why(error)))"
            )
            return Verdict.down.rawValue
        }
        let report = StatusTable.report(snapshot)
        if json {
            // As it came, less what a terminal would take as a command (valid JSON holds no raw control character).
            print(
                StatusTable.printable(String(decoding: answer.body, as: UTF8.self), keepingLines: true), terminator: "")
        } else {
            print(report.text)
        }
        return report.verdict.rawValue
    }

    /// What a decoding error says, in a few printable words (the path to the key and what was wrong).
    static func why(_ error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        let text: String
        switch error as? DecodingError {
        case .keyNotFound(let key, let context)?:
            text = "no \(path(context.codingPath + [key]))"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
            text = context.codingPath.isEmpty ? "not JSON" : "\(path(context.codingPath)): \(context.debugDescription)"
        default:
            text = "not JSON"
        }
        return StatusTable.text(text, limit: 160)
    }

    /// Where the status endpoint is: `--url`, else the config's `status` address, else 127.0.0.1:8080.
    func endpoint() throws(ConfigurationError) -> (host: String, port: Int) {
        if let url {
            var rest = Substring(url)
            if rest.lowercased().hasPrefix("http://") { rest = rest.dropFirst(7) }
            if rest.lowercased().hasPrefix("https://") {
                throw ConfigurationError("--url \(Redaction.text(url)): the status endpoint speaks plain HTTP")
            }
            if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
            guard let address = Self.hostAndPort(String(rest)) else {
                throw ConfigurationError("--url \(Redaction.text(url)): use http://HOST:PORT or HOST:PORT")
            }
            return address
        }
        let path = config ?? Self.defaultConfig
        guard config != nil || access(path, R_OK) == 0 else { return Self.defaultAddress }
        let loaded: ServerConfiguration
        do {
            loaded = try ServerConfiguration.load(path: path)
        } catch {
            throw ConfigurationError("\(error.messages.first ?? "\(path): cannot be read"): use --url")
        }
        guard let status = loaded.server.status else {
            throw ConfigurationError("\(path) has status = off: no status endpoint to read")
        }
        // A wildcard address is reached on loopback.
        let host = status.host == "0.0.0.0" ? "127.0.0.1" : status.host == "::" ? "::1" : status.host
        return (host, status.port)
    }

    /// `HOST:PORT`, `[V6]:PORT`; nil otherwise.
    static func hostAndPort(_ text: String) -> (host: String, port: Int)? {
        HostPort(parsing: text).map { ($0.host, $0.port) }
    }
}

/// The table `radio-relay status` prints, and its verdict, as a pure function of `/status.json` decoded into the
/// server's own schema (`StatusSnapshot`; tests: `StatusCommandTests`). A station is down when its threads stalled
/// (`alive` false); degraded when the input that plays is retrying or is a lower one than its first (a live source
/// above them is no degradation, and a live-only station waiting for its source is fine); else OK. Every figure
/// and text came from a server: counts are clamped, sums saturate, texts are made printable.
package enum StatusTable {
    package static func report(_ snapshot: StatusSnapshot) -> (verdict: StatusCommand.Verdict, text: String) {
        let stations = snapshot.stations
        var verdict = StatusCommand.Verdict.ok
        var problems: [String] = []
        var notes: [String] = []
        var rows = [["STATION", "STATE", "INPUT", "LISTENERS raw/http/hls", "TITLE", "BITRATE", "UPTIME"]]
        var listeners = 0
        for station in stations {
            let name = text(station.name, limit: 64)
            let (state, why) = judge(station)
            if state > verdict { verdict = state }
            if let why {
                if state == .ok { notes.append("\(name) \(why)") } else { problems.append("\(name) \(why)") }
            }
            let total = station.outputs.reduce(0) { adding($0, count($1.listeners)) }
            let http = min(total, station.outputs.reduce(0) { adding($0, count($1.httpListeners)) })
            let hls = station.outputs.reduce(0) { adding($0, count($1.hls?.players ?? 0)) }
            listeners = adding(listeners, adding(total, hls))
            let bitrate = station.opusBitrate > 0 ? "\(station.opusBitrate / 1000)k" : "-"
            let title = station.title.map { text($0, limit: 40) } ?? ""
            rows.append([
                name, state == .ok ? "ok" : state == .degraded ? "degraded" : "down",
                station.playingInput.map { text($0, limit: 32) } ?? "-", "\(total - http)/\(http)/\(hls)",
                title.isEmpty ? "-" : title, bitrate, duration(station.uptime),
            ])
        }
        if stations.isEmpty {
            verdict = .down
            problems.append("no station")
        }
        let summary =
            "radio-relay \(verdict.word): \(stations.count) station\(stations.count == 1 ? "" : "s"), "
            + "\(listeners) listener\(listeners == 1 ? "" : "s")"
            + (problems.isEmpty ? "" : "; " + problems.joined(separator: "; "))
            + (notes.isEmpty ? "" : "; note: " + notes.joined(separator: "; "))
        return (verdict, summary + "\n" + table(rows))
    }

    /// A count from a server: a whole number from 0 up, else 0 (a hostile server's `-1` is nothing).
    static func count(_ number: Int) -> Int { max(0, number) }

    /// `a + b` saturating at `Int.max` (the JSON's numbers are a server's to choose).
    static func adding(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }

    /// A server's text made safe to print: no control or bidi characters (no terminal escape, no forged second
    /// line of plugin output), no `|` (plugin performance data), at most `limit` bytes.
    static func text(_ value: String, limit: Int) -> String {
        Sanitized.text(value, limit: limit).replacingOccurrences(of: "|", with: "\u{A6}")
    }

    /// Text to print as it came, less the control characters a terminal acts on (and bidi controls); line breaks
    /// and tabs stay when `keepingLines`.
    static func printable(_ raw: String, keepingLines: Bool) -> String {
        var out = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars {
            if keepingLines && (scalar == "\n" || scalar == "\t") || !Sanitized.isUnsafe(scalar) { out.append(scalar) }
        }
        return String(out)
    }

    /// A station's state and why it is not OK (or, for an OK station, a note: an input an operator forced).
    static func judge(_ station: StationStatus) -> (StatusCommand.Verdict, String?) {
        if !station.alive { return (.down, "is down (its threads stalled)") }
        let inputs = station.inputs.filter { $0.kind != .live }
        let playing = station.playingInput.map { text($0, limit: 32) }
        if station.inputs.contains(where: { $0.kind == .live && $0.name == station.playingInput }) { return (.ok, nil) }
        if inputs.isEmpty { return (.ok, nil) }  // live-only, waiting for its source
        if case .retrying(let reason) = station.upstream {
            return (.degraded, "is retrying its input" + (reason.isEmpty ? "" : " (\(text(reason, limit: 120)))"))
        }
        // A standby that cannot work (its file cannot be read, dead air) fails the station when it is needed.
        if let broken = inputs.first(where: { $0.state == .failed }) {
            let reason = broken.reason.map { " (\(text($0, limit: 120)))" } ?? ""
            return (.degraded, "has input \(text(broken.name, limit: 32)) failed\(reason)")
        }
        if let first = inputs.first.map({ text($0.name, limit: 32) }), let playing, playing != first {
            // Forcing is an operator's act, not a fault: OK, with a note.
            if station.forcedInput.map({ text($0, limit: 32) }) == playing {
                return (.ok, "plays input \(playing), forced by an operator")
            }
            return (.degraded, "plays input \(playing), not its first (\(first))")
        }
        return (.ok, nil)
    }

    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        let whole = Int(min(seconds, 1e9))
        let (days, hours, minutes) = (whole / 86400, whole / 3600 % 24, whole / 60 % 60)
        if days > 0 { return "\(days)d\(hours)h" }
        if hours > 0 { return "\(hours)h\(minutes < 10 ? "0" : "")\(minutes)m" }
        return "\(minutes)m\(whole % 60 < 10 ? "0" : "")\(whole % 60)s"
    }

    static func table(_ rows: [[String]]) -> String {
        let widths = (0..<(rows.first?.count ?? 0)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }
}
