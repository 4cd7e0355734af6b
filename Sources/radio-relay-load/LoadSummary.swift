import Foundation
import Glibc

/// The figures of one run, for people (`text`) and scripts (JSON, snake_case keys). Times are milliseconds unless
/// the name says seconds.
struct LoadSummary: Codable {
    struct Spread: Codable {
        var count = 0
        var p50: Double?
        var p99: Double?
        var max: Double?

        init(_ values: [Double]) {
            count = values.count
            guard !values.isEmpty else { return }
            let sorted = values.sorted()
            func rank(_ q: Double) -> Double { sorted[Swift.max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1)] }
            p50 = rank(0.5)
            p99 = rank(0.99)
            self.max = sorted.last
        }

        var text: String {
            guard let p50, let p99, let max else { return "-" }
            return String(format: "p50 %8.1f   p99 %8.1f   max %8.1f   (n=%d)", p50, p99, max, count)
        }
    }

    struct Ogg: Codable {
        var pages = 0
        var audioPages = 0
        var crcErrors = 0
        var framingErrors = 0
        var startErrors = 0
        var serialChanges = 0
        /// Sequence jumps after the one allowed join gap, normal listeners.
        var gapsBeyondJoin = 0
        var granuleRegressions = 0
        /// Normal listeners that got audio with no page sequence jump at all (joined at the stream's start).
        var listenersWithoutJoinGap = 0
    }

    struct Slow: Codable {
        var count = 0
        var readBytesPerSecond = 0.0
        var connected = 0
        var disconnectedByServer = 0
        /// Seconds from connect to the server's disconnect, over the disconnected slow listeners.
        var disconnectedAfterSeconds: Spread
        /// Sequence jumps after the join gap among slow listeners: the server moving them to the live edge.
        var gapsBeyondJoin = 0
        var ogg: Ogg
    }

    var host: String
    var port: Int
    var mode: String
    var listeners: Int
    var durationSeconds: Double
    var connectsPerSecond: Double?
    var started = 0
    var connected = 0
    var connectFailures = 0
    var httpRefused = 0
    var openAtEnd = 0
    var unexpectedDisconnectsNormal = 0
    var unexpectedDisconnectsSlow = 0
    /// Normal listeners still open at the end with no data for `stuckAfterSeconds` (or none ever).
    var stuckAtEnd = 0
    var stuckAfterSeconds: Double
    var connectMs: Spread
    var ttfbMs: Spread
    var firstAudioMs: Spread
    /// Longest gap between reads with data, per normal listener, after its first audio page.
    var stallMs: Spread
    /// The same over the normal listeners still open at the end: what listeners saw whose server did not go away
    /// (an edge killed under a balancer disconnects its own listeners; the others must see no gap).
    var stallMsOpenAtEnd: Spread
    var ogg: Ogg
    var slow: Slow
    var bytes = 0
    var megabytes = 0.0
    var megabytesPerSecond = 0.0
    var cpuUserSeconds = 0.0
    var cpuSystemSeconds = 0.0
    var cpuSeconds = 0.0
    /// Failure reasons and how many connections each ended.
    var reasons: [String: Int] = [:]
    var examples: [String] = []
    var ok = true
    var failures: [String] = []

    init(_ run: LoadRun) {
        let options = run.options
        host = options.host
        port = options.port
        mode = options.httpPath.map { "http \($0)" } ?? "raw"
        listeners = run.count
        durationSeconds = run.endTime - run.startTime
        connectsPerSecond = options.ramp.map { $0 > 0 ? Double(run.count) / $0 : nil } ?? LoadOptions.maxConnectRate
        stuckAfterSeconds = options.stuckAfter
        var connect: [Double] = []
        var ttfb: [Double] = []
        var audio: [Double] = []
        var stall: [Double] = []
        var stallOpen: [Double] = []
        var slowAfter: [Double] = []
        ogg = Ogg()
        slow = Slow(
            count: 0, readBytesPerSecond: options.slowCount > 0 ? options.slowReadRate : 0,
            disconnectedAfterSeconds: Spread([]), ogg: Ogg())
        for i in 0..<run.count {
            let c = run.connections[i]
            if c.slow { slow.count += 1 }
            if !c.startedAt.isNaN { started += 1 }
            if let reason = c.failure { reasons[reason, default: 0] += 1 }
            switch c.outcome {
            case .connectFailed: connectFailures += 1
            case .refused: httpRefused += 1
            case .disconnected:
                if c.slow {
                    unexpectedDisconnectsSlow += 1
                    slow.disconnectedByServer += 1
                    slowAfter.append(c.endedAt - c.connectedAt)
                } else {
                    unexpectedDisconnectsNormal += 1
                }
            case .ok:
                if !c.connectedAt.isNaN { openAtEnd += 1 }
            }
            bytes += c.bytes
            guard !c.connectedAt.isNaN else { continue }
            connected += 1
            if c.slow { slow.connected += 1 }
            if c.slow { Self.add(c.check, to: &slow.ogg) } else { Self.add(c.check, to: &ogg) }
            // A slow listener's extra sequence jump is the server moving it to the live edge, not a problem.
            if let problem = c.check.firstProblem, examples.count < 10, !c.slow || c.check.errorCount > 0 {
                examples.append("listener \(i)\(c.slow ? " (slow)" : ""): \(problem)")
            }
            if c.slow { continue }
            if c.check.gaps == 0 && c.check.audioPages > 0 { ogg.listenersWithoutJoinGap += 1 }
            connect.append((c.connectedAt - c.startedAt) * 1000)
            if !c.firstByteAt.isNaN { ttfb.append((c.firstByteAt - c.startedAt) * 1000) }
            if !c.firstAudioAt.isNaN {
                audio.append((c.firstAudioAt - c.startedAt) * 1000)
                stall.append(c.maxStall * 1000)
                if c.outcome == .ok { stallOpen.append(c.maxStall * 1000) }
            }
            if c.outcome == .ok {
                let last = c.lastDataAt.isNaN ? c.connectedAt : c.lastDataAt
                if run.endTime - last >= options.stuckAfter { stuckAtEnd += 1 }
            }
        }
        slow.gapsBeyondJoin = slow.ogg.gapsBeyondJoin
        connectMs = Spread(connect)
        ttfbMs = Spread(ttfb)
        firstAudioMs = Spread(audio)
        stallMs = Spread(stall)
        stallMsOpenAtEnd = Spread(stallOpen)
        slow.disconnectedAfterSeconds = Spread(slowAfter)
        megabytes = Double(bytes) / 1e6
        megabytesPerSecond = durationSeconds > 0 ? megabytes / durationSeconds : 0
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        cpuUserSeconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        cpuSystemSeconds = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        cpuSeconds = cpuUserSeconds + cpuSystemSeconds

        let errors =
            ogg.crcErrors + slow.ogg.crcErrors + ogg.framingErrors + slow.ogg.framingErrors + ogg.startErrors
            + ogg.serialChanges + ogg.granuleRegressions
        if errors > 0 { failures.append("\(errors) Ogg errors") }
        if ogg.gapsBeyondJoin > 0 { failures.append("\(ogg.gapsBeyondJoin) sequence gaps beyond the join gap") }
        if unexpectedDisconnectsNormal > 0 {
            failures.append("\(unexpectedDisconnectsNormal) normal listeners disconnected")
        }
        let normal = run.count - slow.count
        if connected - slow.connected < normal {
            failures.append("\(normal - (connected - slow.connected)) normal listeners never connected")
        }
        if httpRefused > 0 { failures.append("\(httpRefused) HTTP refusals") }
        if stuckAtEnd > 0 { failures.append("\(stuckAtEnd) normal listeners stuck at the end") }
        ok = failures.isEmpty
    }

    private static func add(_ check: OggStreamCheck, to ogg: inout Ogg) {
        ogg.pages += check.pages
        ogg.audioPages += check.audioPages
        ogg.crcErrors += check.crcErrors
        ogg.framingErrors += check.framingErrors
        ogg.startErrors += check.startErrors
        ogg.serialChanges += check.serialChanges
        ogg.gapsBeyondJoin += max(0, check.gaps - 1)
        ogg.granuleRegressions += check.granuleRegressions
    }

    var text: String {
        var lines: [String] = []
        let rate = connectsPerSecond.map { String(format: "%.0f connects/s", $0) } ?? "all at once"
        lines.append(
            String(
                format: "radio-relay-load: %d listeners on %@:%d (%@), %.1f s, %@", listeners, host, port,
                mode, durationSeconds, rate))
        lines.append(
            "  connected              \(connected) of \(listeners) (started \(started), open at the end \(openAtEnd))")
        lines.append(
            "  connect failures       \(connectFailures)" + (httpRefused > 0 ? ", HTTP refused \(httpRefused)" : ""))
        lines.append(
            "  unexpected disconnects normal \(unexpectedDisconnectsNormal), slow \(unexpectedDisconnectsSlow)")
        lines.append(
            String(
                format: "  stuck at the end       %d (normal listeners with no data for %.0f s)", stuckAtEnd,
                stuckAfterSeconds))
        lines.append("  connect ms             \(connectMs.text)")
        lines.append("  TTFB ms                \(ttfbMs.text)")
        lines.append("  first audio page ms    \(firstAudioMs.text)")
        lines.append("  longest stall ms       \(stallMs.text)")
        if unexpectedDisconnectsNormal > 0 { lines.append("    open at the end      \(stallMsOpenAtEnd.text)") }
        lines.append(
            "  Ogg pages              \(ogg.pages + slow.ogg.pages) (audio \(ogg.audioPages + slow.ogg.audioPages))")
        lines.append("  CRC errors             \(ogg.crcErrors + slow.ogg.crcErrors)")
        lines.append("  framing errors         \(ogg.framingErrors + slow.ogg.framingErrors)")
        lines.append("  start errors           \(ogg.startErrors) (OpusHead/OpusTags/clean first audio page)")
        lines.append("  serial changes         \(ogg.serialChanges)")
        lines.append(
            "  sequence gaps beyond the join gap  \(ogg.gapsBeyondJoin)"
                + " (\(ogg.listenersWithoutJoinGap) listeners had no gap at all)")
        lines.append("  granule regressions    \(ogg.granuleRegressions)")
        lines.append(
            String(
                format: "  received               %.1f MB, %.2f MB/s (%.1f kB/s per connected listener)",
                megabytes, megabytesPerSecond,
                connected > 0 ? megabytesPerSecond * 1000 / Double(connected) : 0))
        lines.append(
            String(
                format: "  tool CPU               %.2f s (user %.2f, sys %.2f), %.0f %% of one core",
                cpuSeconds, cpuUserSeconds, cpuSystemSeconds,
                durationSeconds > 0 ? 100 * cpuSeconds / durationSeconds : 0))
        if slow.count > 0 {
            lines.append(
                String(
                    format: "  slow listeners         %d reading %.0f B/s: connected %d, disconnected by the server %d",
                    slow.count, slow.readBytesPerSecond, slow.connected, slow.disconnectedByServer))
            if slow.disconnectedByServer > 0 {
                lines.append("    disconnected after s  \(slow.disconnectedAfterSeconds.text)")
            }
            lines.append(
                "    sequence jumps beyond the join gap (moves to the live edge) \(slow.gapsBeyondJoin), "
                    + "Ogg errors \(slow.ogg.crcErrors + slow.ogg.framingErrors + slow.ogg.startErrors + slow.ogg.serialChanges + slow.ogg.granuleRegressions)"
            )
        }
        if !reasons.isEmpty {
            lines.append("  reasons:")
            for (reason, n) in reasons.sorted(by: { $0.value > $1.value }).prefix(10) {
                lines.append("    \(n) × \(reason)")
            }
        }
        if !examples.isEmpty {
            lines.append("  first problems:")
            for example in examples { lines.append("    \(example)") }
        }
        lines.append(ok ? "  result: OK" : "  result: FAIL (\(failures.joined(separator: "; ")))")
        return lines.joined(separator: "\n")
    }

    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }
}
