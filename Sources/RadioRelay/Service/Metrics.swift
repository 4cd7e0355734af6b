import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `/metrics`: the status snapshot in Prometheus text exposition format 0.0.4, as a pure function.
///
/// Every family has the `radio_relay_` prefix and one `# HELP` and one `# TYPE` line, followed by all its samples,
/// so a family's samples are never split. Station families have one sample per station (a `station` label); output
/// families (listeners, bytes, pages, refusals, moves, drops, bitrate, channels) one per output, labelled `station`
/// and `rendition`: `main` for the station's own output, else the rendition's name (which may not be `main`), so
/// `sum by (station)` gives a station's totals. Counters end in `_total`;
/// units are base units (seconds, bytes, hertz); bitrates, in bits per second, carry no unit suffix because
/// promtool's lint would ask for bytes. Label values escape `\`, `"` and line feeds, HELP
/// texts `\` and line feeds, as the format asks.
enum MetricsReport {
    /// The content type Prometheus negotiates for this format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// One metric family: name (without prefix), kind, help, and how to read its value from a station or an output.
    struct Family<Subject>: Sendable {
        var name: String
        var kind: Kind
        var help: String
        var value: @Sendable (Subject) -> Double?
    }

    static let prefix = "radio_relay_"

    /// The per-station families, in output order.
    static let stationFamilies: [Family<StationStatus>] = [
        Family(name: "station_alive", kind: .gauge, help: "1 while the station's pipeline and network threads beat") {
            $0.alive ? 1 : 0
        },
        Family(
            name: "input_playing_rank", kind: .gauge,
            help: "0 while the station plays its first input (or a live source), n while it plays the one n below"
        ) {
            Double($0.playingRank)
        },
        Family(name: "upstream_up", kind: .gauge, help: "1 while the upstream is connected") {
            $0.upstream == .connected ? 1 : 0
        },
        Family(name: "input_sample_rate_hertz", kind: .gauge, help: "Sample rate of the upstream MP3") {
            $0.format.map { Double($0.sampleRate) }
        },
        Family(name: "input_channels", kind: .gauge, help: "Channels of the upstream MP3") {
            $0.format.map { Double($0.channels) }
        },
        Family(name: "input_bitrate", kind: .gauge, help: "Upstream MP3 bitrate, bits per second") {
            $0.format.map { Double($0.bitrate) }
        },
        Family(name: "upstream_received_bytes_total", kind: .counter, help: "Bytes received from the upstream") {
            Double($0.bytesIn)
        },
        Family(name: "upstream_reconnects_total", kind: .counter, help: "Upstream connection failures retried") {
            Double($0.reconnects)
        },
        Family(name: "decode_errors_total", kind: .counter, help: "MP3 frames that failed to decode") {
            Double($0.decodeErrors)
        },
        Family(name: "silence_inserted_seconds_total", kind: .counter, help: "Silence encoded for a missing upstream") {
            $0.silenceSeconds
        },
        Family(name: "dropped_audio_seconds_total", kind: .counter, help: "Upstream audio dropped to keep the lead") {
            $0.droppedSeconds
        },
        Family(name: "paused_seconds_total", kind: .counter, help: "Seconds the pipeline did not run (paused)") {
            $0.pausedSeconds
        },
        Family(name: "encoded_seconds_total", kind: .counter, help: "Seconds of audio encoded") { $0.encodedSeconds },
        Family(name: "decoded_frames_total", kind: .counter, help: "MPEG frames decoded, once for all outputs") {
            Double($0.decodedPackets)
        },
        Family(name: "readers", kind: .gauge, help: "MP3 decoders (Readers) the station made: 1 for all outputs") {
            Double($0.readers)
        },
        Family(name: "encoders", kind: .gauge, help: "Opus encoders fed from the one decode: one per output") {
            Double($0.encoders)
        },
    ]

    /// The per-output families, in output order.
    static let outputFamilies: [Family<OutputStatus>] = [
        Family(name: "listeners", kind: .gauge, help: "Listeners connected now") { Double($0.listeners) },
        Family(name: "listeners_http", kind: .gauge, help: "Of the listeners, those connected over HTTP") {
            Double($0.httpListeners)
        },
        Family(name: "listeners_peak", kind: .gauge, help: "Most listeners connected at once since start") {
            Double($0.peakListeners)
        },
        Family(name: "opus_bitrate", kind: .gauge, help: "Opus target bitrate, bits per second") {
            $0.format == "mp3" ? nil : Double($0.opusBitrate)
        },
        Family(name: "opus_channels", kind: .gauge, help: "Opus channels: 1 (mono) or 2") {
            $0.format == "mp3" ? nil : Double($0.channels)
        },
        Family(name: "sent_bytes_total", kind: .counter, help: "Bytes sent to listeners") { Double($0.bytesOut) },
        Family(
            name: "published_pages_total", kind: .counter,
            help: "Pages put in the output's ring (Ogg pages; runs of frames for MP3)"
        ) {
            Double($0.pagesPublished)
        },
        Family(name: "listeners_peak_hour", kind: .gauge, help: "Most listeners connected at once in the last hour") {
            Double($0.peakListenersHour)
        },
        Family(name: "listening_seconds_total", kind: .counter, help: "Seconds listened, sessions going on included") {
            $0.listeningSeconds
        },
        Family(name: "hls_segments_total", kind: .counter, help: "HLS media segments made") {
            $0.hls.map { Double($0.segments) }
        },
        Family(name: "hls_held_bytes", kind: .gauge, help: "Bytes of HLS segments held in memory") {
            $0.hls.map { Double($0.heldBytes) }
        },
        Family(name: "hls_answers_total", kind: .counter, help: "HLS playlists and segments answered (200, 304)") {
            $0.hls.map { Double($0.answered) }
        },
        Family(
            name: "hls_not_found_total", kind: .counter, help: "HLS names answered 404 (left the window, or unknown)"
        ) {
            $0.hls.map { Double($0.notFound) }
        },
        Family(
            name: "hls_players", kind: .gauge,
            help: "Distinct addresses that fetched the HLS stream within the last 30 s"
        ) {
            $0.hls.map { Double($0.players) }
        },
        Family(name: "connections_total", kind: .counter, help: "Listener connections accepted") {
            Double($0.connections)
        },
        Family(name: "refused_connections_total", kind: .counter, help: "Connections refused (limits)") {
            Double($0.refusals)
        },
        Family(name: "slow_listener_moves_total", kind: .counter, help: "Listeners moved to the live edge") {
            Double($0.slowMoves)
        },
        Family(name: "slow_listener_drops_total", kind: .counter, help: "Listeners dropped for falling behind") {
            Double($0.slowDrops)
        },
        Family(name: "chatty_listener_drops_total", kind: .counter, help: "Listeners dropped for sending too much") {
            Double($0.chattyDrops)
        },
        Family(
            name: "session_limit_ends_total", kind: .counter,
            help: "Listeners whose stream ended at the session limit (max_listener_duration)"
        ) {
            Double($0.sessionLimitEnds)
        },
        Family(
            name: "proxy_header_failures_total", kind: .counter,
            help: "Connections closed for a missing, invalid or late PROXY header"
        ) { Double($0.proxyRejected) },
        Family(name: "network_loop_wakeups_total", kind: .counter, help: "Wake-ups of the output's network loop") {
            Double($0.loopWakeups)
        },
    ]

    /// One family of push samples: one per push, labelled with its station and its target (password hidden).
    struct PushFamily: Sendable {
        var name: String
        var kind: Kind
        var help: String
        var value: @Sendable (PushStatus) -> Double
    }

    static let pushFamilies: [PushFamily] = [
        PushFamily(name: "push_connected", kind: .gauge, help: "1 while Icecast has accepted the push") {
            $0.state == .connected ? 1 : 0
        },
        PushFamily(name: "push_sent_bytes_total", kind: .counter, help: "Bytes sent to Icecast by the push") {
            Double($0.bytesSent)
        },
        PushFamily(name: "push_reconnects_total", kind: .counter, help: "Push connections that failed and were retried")
        {
            Double($0.reconnects)
        },
    ]

    static func text(_ snapshot: StatusSnapshot) -> String {
        var out = ""
        header(&out, "build_info", .gauge, "Always 1; the version is a label")
        out += "\(prefix)build_info{version=\"\(labelValue(snapshot.version))\"} 1\n"
        header(&out, "uptime_seconds", .gauge, "Seconds since the server started")
        out += "\(prefix)uptime_seconds \(number(snapshot.uptime))\n"
        if let budget = snapshot.budget {
            header(&out, "listener_budget_used", .gauge, "Listener places taken across all stations (descriptors)")
            out += "\(prefix)listener_budget_used \(budget.used)\n"
            header(&out, "listener_budget_limit", .gauge, "Listener places the descriptor limit allows in all")
            out += "\(prefix)listener_budget_limit \(budget.limit)\n"
        }
        header(&out, "stations", .gauge, "Stations configured")
        out += "\(prefix)stations \(snapshot.stations.count)\n"
        for family in stationFamilies + limiterFamilies {
            header(&out, family.name, family.kind, family.help)
            for station in snapshot.stations {
                guard let value = family.value(station) else { continue }
                out += "\(prefix)\(family.name){station=\"\(labelValue(station.name))\"} \(number(value))\n"
            }
        }
        for family in outputFamilies {
            header(&out, family.name, family.kind, family.help)
            for station in snapshot.stations {
                let label = labelValue(station.name)
                for output in station.outputs {
                    guard let value = family.value(output) else { continue }
                    out +=
                        "\(prefix)\(family.name){station=\"\(label)\",rendition=\"\(labelValue(output.rendition))\"} "
                        + "\(number(value))\n"
                }
            }
        }
        sessionHistogram(&out, snapshot)
        if !snapshot.loops.isEmpty {
            header(
                &out, "loop_wakeups_total", .counter, "Wake-ups of the server's loops: network (net-N), HTTP, status")
            for loop in snapshot.loops {
                out += "\(prefix)loop_wakeups_total{loop=\"\(labelValue(loop.name))\"} \(loop.wakeups)\n"
            }
        }
        inputSamples(&out, snapshot)
        archiveSamples(&out, snapshot)
        recordingSamples(&out, snapshot)
        if !snapshot.refusals.isEmpty {
            header(&out, "listeners_refused_total", .counter, "Listeners refused by the admission point, by reason")
            for refusal in snapshot.refusals {
                out += "\(prefix)listeners_refused_total{reason=\"\(refusal.reason.rawValue)\"} \(refusal.count)\n"
            }
            header(&out, "listeners_redirected_total", .counter, "Listeners sent to a station's overflow URL")
            out += "\(prefix)listeners_redirected_total \(snapshot.redirects)\n"
        }
        authenticationSamples(&out, snapshot.authentication)
        for family in pushFamilies {
            header(&out, family.name, family.kind, family.help)
            for station in snapshot.stations {
                for push in station.pushes {
                    let labels = "station=\"\(labelValue(station.name))\",target=\"\(labelValue(push.target))\""
                    out += "\(prefix)\(family.name){\(labels)} \(number(family.value(push)))\n"
                }
            }
        }
        return out
    }

    /// The lengths of the listener sessions that ended, per output, as a histogram (`ListenerStatistics`).
    private static func sessionHistogram(_ out: inout String, _ snapshot: StatusSnapshot) {
        let name = "listener_session_seconds"
        header(&out, name, .histogram, "Lengths of the listener sessions that ended")
        for station in snapshot.stations {
            for output in station.outputs {
                let labels = "station=\"\(labelValue(station.name))\",rendition=\"\(labelValue(output.rendition))\""
                var count = 0
                let bounds = ListenerStatistics.sessionBounds.map(number) + ["+Inf"]
                for (bound, sessions) in zip(bounds, output.sessionBuckets) {
                    count += sessions
                    out += "\(prefix)\(name)_bucket{\(labels),le=\"\(bound)\"} \(count)\n"
                }
                out += "\(prefix)\(name)_sum{\(labels)} \(number(output.endedSessionSeconds))\n"
                out += "\(prefix)\(name)_count{\(labels)} \(count)\n"
            }
        }
    }

    static func header(_ out: inout String, _ name: String, _ kind: Kind, _ help: String) {
        out += "# HELP \(prefix)\(name) \(helpText(help))\n# TYPE \(prefix)\(name) \(kind.rawValue)\n"
    }

    /// A label value escaped as the format says: `\` → `\\`, `"` → `\"`, line feed → `\n`.
    static func labelValue(_ text: String) -> String { escaped(text, quotes: true) }

    /// HELP text escaped: `\` → `\\`, line feed → `\n`.
    static func helpText(_ text: String) -> String { escaped(text, quotes: false) }

    private static func escaped(_ text: String, quotes: Bool) -> String {
        var out = ""
        for character in text.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\"" where quotes: out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// A sample value: whole numbers without a fraction, `+Inf`, `-Inf` and `NaN` spelled as the format does.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }
}
