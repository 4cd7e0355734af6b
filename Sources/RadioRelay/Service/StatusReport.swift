import Foundation
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The status endpoint's human- and machine-readable reports, as pure functions of a `StatusSnapshot`:
/// `/status.json` and the `/health` text. (`/metrics` is `MetricsReport`.)
///
/// JSON shape (snake_case keys; `stations` and each station's `outputs` are always arrays, also with one element):
///
///     {"version": "0.1.0", "uptime_seconds": 12.5, "healthy": true,
///      "stations": [{"name": "main", …, "readers": 1, "encoders": 2,
///                    "outputs": [{"rendition": "main", "mount": "main.opus", …}, {"rendition": "low", …}]}],
///      "listeners_total": 2,
///      "listeners": [{"id": 1, "kind": "tcp", "station": "main", "mount": "/main.opus", "address": "127.0.0.1",
///                     "user_agent": null, "seconds": 12, "bytes": 48213}, …]}
///
/// `listeners` are the admitted listeners of every kind (raw TCP, HTTP, HLS sessions, title-event subscribers),
/// oldest first, at most `StatusSnapshot.listedListeners` of them (`listeners_total` counts all): addresses are
/// personal data, so `status_token` protects them with the rest.
///
/// A station's listener and byte figures are the sums over its outputs.
enum StatusReport {
    /// `snapshot` as JSON (`StatusSchema`), one line; U+2028, U+2029 and U+007F escaped as well (some JavaScript
    /// consumers choke on them).
    static func json(_ snapshot: StatusSnapshot) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        guard let data = try? encoder.encode(snapshot) else {
            // Every value is encodable (non-finite numbers are written as null): this is not reached.
            return "{\"version\":\(JSONText.string(snapshot.version)),\"error\":\"status could not be encoded\"}\n"
        }
        var text = String.UnicodeScalarView()
        for scalar in String(decoding: data, as: UTF8.self).unicodeScalars {
            switch scalar.value {
            case 0x7F, 0x2028, 0x2029: text.append(contentsOf: "\\u\(JSONText.hex4(scalar.value))".unicodeScalars)
            default: text.append(scalar)
            }
        }
        return String(text) + "\n"
    }

    /// The `/health` body: one line overall, then one per station. Station names are plain (`[A-Za-z0-9_-]`);
    /// anything else in them is left out rather than written to a text body.
    static func health(_ snapshot: StatusSnapshot) -> String {
        var lines = [snapshot.isHealthy ? "ok" : "unhealthy"]
        for station in snapshot.stations {
            let name = String(station.name.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F })
            lines.append(
                "\(name): \(station.alive ? "alive" : "stalled") (upstream \(station.upstream.phase.rawValue))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
