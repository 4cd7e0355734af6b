import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The status reports as pure functions of a snapshot: JSON escaping and shape, Prometheus names, types and
/// escaping, the health text, and credential removal.
@Suite struct StatusReportTests {
    static func station(_ name: String, title: String? = nil) -> StationStatus {
        var status = StationStatus(name: name)
        status.listenAddress = "127.0.0.1:8000"
        status.upstreamURL = "http://example.org/live.mp3"
        status.upstream = .connected
        status.title = title
        status.format = FormatStatus(
            DataFormat(sampleRate: 44_100, channels: 2, bitrate: 128_000, layer: 3, samplesPerFrame: 1152))
        status.reconnects = 4
        status.silenceSeconds = 1.25
        status.droppedSeconds = 0.5
        status.pausedSeconds = 30
        var main = OutputStatus(rendition: "main")
        main.opusBitrate = 96_000
        main.listeners = 3
        main.peakListeners = 7
        main.bytesOut = 123_456
        main.connections = 9
        main.refusals = 1
        main.slowMoves = 2
        main.slowDrops = 1
        status.outputs = [main]
        return status
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func jsonEscapesQuotesBackslashesAndControls() throws {
        let nasty = "a\"b\\c\n\r\t\u{0}\u{1}\u{1F}\u{7F}\u{2028}é–😀/"
        #expect(JSONText.string("a\"b\\") == #""a\"b\\""#)
        #expect(JSONText.string("\u{0}\u{1F}") == #""\u0000\u001f""#)
        #expect(JSONText.string("\n\r\t\u{8}\u{C}") == #""\n\r\t\b\f""#)
        // Whatever the text, the output parses back to it.
        let parsed = try #require(
            JSONSerialization.jsonObject(with: Data("[\(JSONText.string(nasty))]".utf8)) as? [String])
        #expect(parsed == [nasty])
        #expect(!JSONText.string(nasty).unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test func jsonNumbersAreAlwaysValid() {
        #expect(JSONText.number(3.0) == "3")
        #expect(JSONText.number(1.23456) == "1.235")
        #expect(JSONText.number(.infinity) == "null")
        #expect(JSONText.number(-.infinity) == "null")
        #expect(JSONText.number(.nan) == "null")
        #expect(JSONText.number(1e300) == "1e+300")
        #expect(JSONText.number(0.000_01) == "0")
    }

    @Test(arguments: [1, 3]) func stationsAreAlwaysAnArray(count: Int) throws {
        let names = ["one", "two", "three"].prefix(count)
        let snapshot = StatusSnapshot(uptime: 12.5, stations: names.map { Self.station($0) })
        let json = try Self.object(StatusReport.json(snapshot))
        #expect(json["version"] as? String == RadioRelayVersion.string)
        #expect(json["uptime_seconds"] as? Double == 12.5)
        #expect(json["healthy"] as? Bool == true)
        let stations = try #require(json["stations"] as? [[String: Any]])
        #expect(stations.map { $0["name"] as? String } == names.map { $0 })
        let first = stations[0]
        #expect(first["upstream_state"] as? String == "connected")
        #expect(first["upstream_url"] as? String == "http://example.org/live.mp3")
        #expect(first["last_error"] is NSNull && first["title"] is NSNull)
        #expect(first["listeners"] as? Int == 3 && first["peak_listeners"] as? Int == 7)
        #expect(first["bytes_out"] as? Int == 123_456 && first["opus_bitrate"] as? Int == 96_000)
        #expect(first["refusals"] as? Int == 1 && first["slow_moves"] as? Int == 2 && first["slow_drops"] as? Int == 1)
        #expect(first["reconnects"] as? Int == 4 && first["silence_seconds"] as? Double == 1.25)
        #expect(first["dropped_seconds"] as? Double == 0.5 && first["paused_seconds"] as? Int == 30)
        let input = try #require(first["input"] as? [String: Any])
        #expect(input["sample_rate"] as? Int == 44_100 && input["channels"] as? Int == 2)
    }

    /// Each station's pushes: always an array, each push with its target (no password), state and counters.
    @Test func pushesAreAnArrayPerStation() throws {
        var station = Self.station("one")
        var push = PushStatus(target: "icecast://***@icecast.example:8000/live.opus")
        push.state = .retrying
        push.lastError = "Icecast answered HTTP 401: You need to authenticate"
        push.bytesSent = 4096
        push.reconnects = 2
        station.pushes = [push, PushStatus(target: "icecast://***@other.example:8000/b.opus")]
        let json = try Self.object(StatusReport.json(StatusSnapshot(stations: [station, Self.station("two")])))
        let stations = try #require(json["stations"] as? [[String: Any]])
        let pushes = try #require(stations[0]["pushes"] as? [[String: Any]])
        #expect(pushes.count == 2 && (stations[1]["pushes"] as? [Any])?.isEmpty == true)
        #expect(pushes[0]["target"] as? String == "icecast://***@icecast.example:8000/live.opus")
        #expect(pushes[0]["state"] as? String == "retrying" && pushes[1]["state"] as? String == "connecting")
        #expect(pushes[0]["last_error"] as? String == "Icecast answered HTTP 401: You need to authenticate")
        #expect(pushes[1]["last_error"] is NSNull)
        #expect(pushes[0]["bytes_sent"] as? Int == 4096 && pushes[0]["reconnects"] as? Int == 2)
    }

    @Test func noStationsIsAnEmptyArray() throws {
        let json = try Self.object(StatusReport.json(StatusSnapshot()))
        #expect((json["stations"] as? [Any])?.isEmpty == true)
    }

    @Test func upstreamTextIsEscapedInTheReport() throws {
        var status = Self.station("main", title: "Quote \" back \\ slash\u{1}")
        status.upstream = .retrying(reason: "HTTP 503 from \"x\"")
        status.lastError = "line\nbreak"
        let json = try Self.object(StatusReport.json(StatusSnapshot(stations: [status])))
        let station = try #require((json["stations"] as? [[String: Any]])?.first)
        #expect(station["title"] as? String == "Quote \" back \\ slash\u{1}")
        #expect(station["upstream_state"] as? String == "retrying")
        #expect(station["upstream_reason"] as? String == "HTTP 503 from \"x\"")
        #expect(station["last_error"] as? String == "line\nbreak")
    }

    @Test func metricsHaveOneHelpAndTypePerFamilyAndTheRightSuffixes() {
        let snapshot = StatusSnapshot(uptime: 2, stations: [Self.station("a"), Self.station("b"), Self.station("c")])
        let text = MetricsReport.text(snapshot)
        let lines = text.split(separator: "\n").map(String.init)
        let types = lines.filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ").map(String.init) }
        let helps = lines.filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] }
        #expect(Set(types.map { $0[2] }).count == types.count, "a family declared twice")
        #expect(types.map { Substring($0[2]) } == helps)
        for type in types {
            #expect(type[2].hasPrefix("radio_relay_"))
            #expect((type[3] == "counter") == type[2].hasSuffix("_total"), "\(type)")
        }
        #expect(lines.contains("radio_relay_build_info{version=\"\(RadioRelayVersion.string)\"} 1"))
        #expect(lines.contains("radio_relay_uptime_seconds 2"))
        #expect(lines.contains("radio_relay_listeners{station=\"b\",rendition=\"main\"} 3"))
        #expect(lines.contains("radio_relay_listeners_peak{station=\"c\",rendition=\"main\"} 7"))
        #expect(lines.contains("radio_relay_sent_bytes_total{station=\"a\",rendition=\"main\"} 123456"))
        #expect(lines.contains("radio_relay_silence_inserted_seconds_total{station=\"a\"} 1.25"))
        #expect(lines.contains("radio_relay_upstream_up{station=\"a\"} 1"))
        // Each family's samples follow its TYPE line, one per station.
        let listeners = lines.firstIndex(of: "# TYPE radio_relay_listeners gauge")!
        #expect(lines[(listeners + 1)...].prefix(3).allSatisfy { $0.hasPrefix("radio_relay_listeners{") })
        #expect(text.hasSuffix("\n"))
    }

    /// Push families: one sample per push, with station and target labels; the whole text passes promtool.
    @Test func pushMetrics() throws {
        var station = Self.station("a")
        var push = PushStatus(target: "icecast://***@icecast.example:8000/live.opus")
        push.state = .connected
        push.bytesSent = 4096
        push.reconnects = 2
        station.pushes = [push, PushStatus(target: "icecast://***@[::1]:8001/b.opus")]
        let text = MetricsReport.text(StatusSnapshot(stations: [station, Self.station("b")]))
        let target = "station=\"a\",target=\"icecast://***@icecast.example:8000/live.opus\""
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("radio_relay_push_connected{\(target)} 1"))
        #expect(lines.contains("radio_relay_push_sent_bytes_total{\(target)} 4096"))
        #expect(lines.contains("radio_relay_push_reconnects_total{\(target)} 2"))
        #expect(
            lines.contains(
                "radio_relay_push_connected{station=\"a\",target=\"icecast://***@[::1]:8001/b.opus\"} 0"))
        #expect(lines.filter { $0.hasPrefix("radio_relay_push_connected{") }.count == 2)
        let promtool = try #require(tool("promtool"), "promtool checks the text (.ci/deps --test installs it)")
        let path = temporaryPath("push-metrics.txt")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let check = try run("/bin/sh", ["-c", "\"$0\" check metrics < \"$1\"", promtool, path])
        #expect(check.status == 0 && check.stdout.isEmpty && check.stderr.isEmpty, "promtool: \(check)")
    }

    @Test func metricLabelsAndHelpAreEscaped() {
        #expect(MetricsReport.labelValue("a\"b\\c\nd") == #"a\"b\\c\nd"#)
        #expect(MetricsReport.helpText("a\"b\\c\nd") == #"a"b\\c\nd"#)
        #expect(MetricsReport.number(.nan) == "NaN" && MetricsReport.number(.infinity) == "+Inf")
        #expect(MetricsReport.number(-.infinity) == "-Inf" && MetricsReport.number(0.25) == "0.25")
        let text = MetricsReport.text(StatusSnapshot(stations: [StationStatus(name: "we\"ird\\\n")]))
        #expect(text.contains("radio_relay_station_alive{station=\"we\\\"ird\\\\\\n\"} 1"))
        // Without a known input format its gauges are left out, not reported as 0.
        #expect(!text.contains("radio_relay_input_sample_rate_hertz{"))
    }

    @Test func healthSaysWhichStationStalled() {
        var stalled = Self.station("b")
        stalled.alive = false
        let snapshot = StatusSnapshot(stations: [Self.station("a"), stalled])
        #expect(!snapshot.isHealthy)
        #expect(
            StatusReport.health(snapshot)
                == "unhealthy\na: alive (upstream connected)\nb: stalled (upstream connected)\n")
        #expect(StatusReport.health(StatusSnapshot(stations: [Self.station("a\u{1B}[31m")])).hasPrefix("ok\na[31m:"))
        #expect(MetricsReport.text(snapshot).contains("radio_relay_station_alive{station=\"b\"} 0"))
    }
}
