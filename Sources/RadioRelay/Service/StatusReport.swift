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
    static func json(_ snapshot: StatusSnapshot) -> String {
        JSONText.object([
            ("version", JSONText.string(snapshot.version)),
            ("uptime_seconds", JSONText.number(snapshot.uptime)),
            (
                "listener_budget",
                snapshot.budget.map {
                    JSONText.object([("used", JSONText.number($0.used)), ("limit", JSONText.number($0.limit))])
                } ?? "null"
            ),
            ("healthy", snapshot.isHealthy ? "true" : "false"),
            ("stations", JSONText.array(snapshot.stations.map(station))),
            ("listeners_total", JSONText.number(snapshot.listenersTotal)),
            ("listeners", JSONText.array(snapshot.listeners.map(listener))),
        ]) + "\n"
    }

    /// One admitted listener: its ID (Icecast's client ID), where and how it listens, for how long, what it got.
    static func listener(_ status: ListenerStatus) -> String {
        JSONText.object([
            ("id", status.id.description),
            ("kind", JSONText.string(status.kind.rawValue)),
            ("station", JSONText.string(status.station)),
            ("mount", JSONText.string(status.mount)),
            ("address", JSONText.string(status.address)),
            ("user_agent", JSONText.string(status.userAgent)),
            ("seconds", JSONText.number(status.seconds.rounded(.down))),
            ("bytes", JSONText.number(status.bytes)),
        ])
    }

    static func station(_ status: StationStatus) -> String {
        JSONText.object([
            ("name", JSONText.string(status.name)),
            ("listen", JSONText.string(status.listenAddress)),
            ("alive", status.alive ? "true" : "false"),
            ("uptime_seconds", JSONText.number(status.uptime)),
            ("upstream_url", JSONText.string(status.upstreamURL)),
            ("upstream_state", JSONText.string(status.upstreamState)),
            ("upstream_reason", JSONText.string(status.upstreamReason)),
            ("last_error", JSONText.string(status.lastError)),
            ("title", JSONText.string(status.title)),
            ("input", status.format.map(format) ?? "null"),
            ("opus_bitrate", JSONText.number(status.opusBitrate)),
            ("listeners", JSONText.number(status.listeners)),
            ("listeners_http", JSONText.number(status.outputs.reduce(0) { $0 + $1.httpListeners })),
            ("peak_listeners", JSONText.number(status.peakListeners)),
            ("bytes_out", JSONText.number(status.bytesOut)),
            ("bytes_in", JSONText.number(status.bytesIn)),
            ("connections", JSONText.number(status.connections)),
            ("refusals", JSONText.number(status.refusals)),
            ("slow_moves", JSONText.number(status.slowMoves)),
            ("slow_drops", JSONText.number(status.slowDrops)),
            ("chatty_drops", JSONText.number(status.chattyDrops)),
            ("proxy_header_failures", JSONText.number(status.outputs.reduce(0) { $0 + $1.proxyRejected })),
            ("reconnects", JSONText.number(status.reconnects)),
            ("decode_errors", JSONText.number(status.decodeErrors)),
            ("silence_seconds", JSONText.number(status.silenceSeconds)),
            ("dropped_seconds", JSONText.number(status.droppedSeconds)),
            ("paused_seconds", JSONText.number(status.pausedSeconds)),
            ("encoded_seconds", JSONText.number(status.encodedSeconds)),
            ("packets", JSONText.number(status.packets)),
            ("decoded_packets", JSONText.number(status.decodedPackets)),
            ("readers", JSONText.number(status.readers)),
            ("encoders", JSONText.number(status.encoders)),
            ("outputs", JSONText.array(status.outputs.map(output))),
            ("pushes", JSONText.array(status.pushes.map(push))),
            ("input_playing", JSONText.string(status.playingInput)),
            ("input_forced", JSONText.string(status.forcedInput)),
            ("inputs", JSONText.array(status.inputs.map(input))),
            ("switches", JSONText.array(status.switches.map(inputSwitch))),
            (
                "switch_counts",
                JSONText.object(
                    status.switchCounts.sorted { $0.key < $1.key }.map { ($0.key, JSONText.number($0.value)) })
            ),
            ("history", status.history.json),
        ])
    }

    /// One input: its state (`playing`, `standby`, `connecting`, `retrying`, `failed`, `waiting`), why, since when
    /// (Unix seconds), its URL redacted, its format, and the live source's client while one is connected.
    static func input(_ input: InputState) -> String {
        JSONText.object([
            ("name", JSONText.string(input.name)),
            ("kind", JSONText.string(input.kind)),
            ("url", JSONText.string(input.url)),
            ("state", JSONText.string(input.state)),
            ("reason", JSONText.string(input.reason)),
            ("since", JSONText.number(input.since)),
            ("connected", input.connected ? "true" : "false"),
            ("title", JSONText.string(input.title)),
            ("bytes_in", JSONText.number(input.bytesIn)),
            ("reconnects", JSONText.number(input.reconnects)),
            ("format", JSONText.string(input.format)),
            ("source", input.source.map(source) ?? "null"),
        ])
    }

    /// The live source on the air: its address, client, method, since when (Unix seconds), bytes sent.
    static func source(_ source: InputState.Source) -> String {
        JSONText.object([
            ("address", JSONText.string(source.address)),
            ("user_agent", JSONText.string(source.userAgent)),
            ("method", JSONText.string(source.method)),
            ("since", JSONText.number(source.since)),
            ("bytes", JSONText.number(source.bytes)),
        ])
    }

    /// One switch: when (Unix seconds), from which input to which, why.
    static func inputSwitch(_ change: InputSwitch) -> String {
        JSONText.object([
            ("at", JSONText.number(change.at)),
            ("from", JSONText.string(change.from)),
            ("to", JSONText.string(change.to)),
            ("reason", JSONText.string(change.reason)),
            ("detail", JSONText.string(change.detail)),
        ])
    }

    /// One output: `rendition` is `main` for the station's own.
    static func output(_ status: OutputStatus) -> String {
        JSONText.object([
            ("rendition", JSONText.string(status.rendition)),
            ("mount", JSONText.string(status.mount)),
            ("listen", JSONText.string(status.listenAddress)),
            ("format", JSONText.string(status.format)),
            ("opus_bitrate", JSONText.number(status.opusBitrate)),
            ("channels", JSONText.number(status.channels)),
            ("listeners", JSONText.number(status.listeners)),
            ("listeners_http", JSONText.number(status.httpListeners)),
            ("peak_listeners", JSONText.number(status.peakListeners)),
            ("bytes_out", JSONText.number(status.bytesOut)),
            ("pages", JSONText.number(status.pagesPublished)),
            ("connections", JSONText.number(status.connections)),
            ("refusals", JSONText.number(status.refusals)),
            ("slow_moves", JSONText.number(status.slowMoves)),
            ("slow_drops", JSONText.number(status.slowDrops)),
            ("chatty_drops", JSONText.number(status.chattyDrops)),
            ("proxy_header_failures", JSONText.number(status.proxyRejected)),
            ("peak_listeners_hour", JSONText.number(status.peakListenersHour)),
            ("listening_seconds", JSONText.number(status.listeningSeconds, decimals: 1)),
            ("sessions", JSONText.number(status.sessionBuckets.reduce(0, +))),
            ("session_seconds", sessions(status.sessionBuckets)),
            ("hls", status.hls.map(hls) ?? "null"),
        ])
    }

    /// Ended sessions by length: `{"10": n, "60": n, …, "+Inf": n}`, each bucket on its own (not cumulative).
    static func sessions(_ buckets: [Int]) -> String {
        let labels = ListenerStatistics.sessionBounds.map { String(Int($0)) } + ["+Inf"]
        return JSONText.object(zip(labels, buckets).map { ($0, JSONText.number($1)) })
    }

    /// An output's HLS stream: segments made, bytes held, answers given and 404s.
    static func hls(_ status: HLSStatus) -> String {
        JSONText.object([
            ("segments", JSONText.number(status.segments)),
            ("held_bytes", JSONText.number(status.heldBytes)),
            ("answers", JSONText.number(status.answered)),
            ("not_found", JSONText.number(status.notFound)),
            ("players", JSONText.number(status.players)),
        ])
    }

    /// One push to Icecast: the target without its password, `connecting`, `connected` or `retrying`.
    static func push(_ push: PushStatus) -> String {
        JSONText.object([
            ("target", JSONText.string(push.target)),
            ("state", JSONText.string(push.state.rawValue)),
            ("last_error", JSONText.string(push.lastError)),
            ("bytes_sent", JSONText.number(push.bytesSent)),
            ("reconnects", JSONText.number(push.reconnects)),
        ])
    }

    static func format(_ format: DataFormat) -> String {
        JSONText.object([
            ("layer", JSONText.number(format.layer)),
            ("sample_rate", JSONText.number(format.sampleRate)),
            ("channels", JSONText.number(format.channels)),
            ("bitrate", JSONText.number(format.bitrate)),
            ("description", JSONText.string(format.description)),
        ])
    }

    /// The `/health` body: one line overall, then one per station. Station names are plain (`[A-Za-z0-9_-]`);
    /// anything else in them is left out rather than written to a text body.
    static func health(_ snapshot: StatusSnapshot) -> String {
        var lines = [snapshot.isHealthy ? "ok" : "unhealthy"]
        for station in snapshot.stations {
            let name = String(station.name.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F })
            lines.append("\(name): \(station.alive ? "alive" : "stalled") (upstream \(station.upstreamState))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
